// A tiny MCP server for the mcp-tools example: the greenhouse's sensors and its vent, as tools. Written with the
// official SDK (@modelcontextprotocol/sdk) and spoken to over stdin and stdout; tea starts it when the agent first
// uses one of its tools and stops it when the run ends. Its readings are fixed, so the example runs the same each time.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const READINGS = { temperature: { value: 31.5, unit: '°C' }, humidity: { value: 78, unit: '%' } }
let ventOpen = false

const server = new Server({ name: 'greenhouse', version: '1.0.0' }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'read_sensor',
      description: 'Reads one of the greenhouse sensors: temperature or humidity.',
      inputSchema: { type: 'object', properties: { sensor: { type: 'string', enum: ['temperature', 'humidity'] } }, required: ['sensor'] },
    },
    {
      name: 'set_vent',
      description: 'Opens or closes the roof vent.',
      inputSchema: { type: 'object', properties: { open: { type: 'boolean' } }, required: ['open'] },
    },
  ],
}))
server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
  const args = params.arguments ?? {}
  if (params.name === 'read_sensor') {
    const reading = READINGS[args.sensor]
    if (!reading) return { content: [{ type: 'text', text: `no sensor ${args.sensor}` }], isError: true }
    return { content: [{ type: 'text', text: `${reading.value} ${reading.unit}` }] }
  }
  if (params.name === 'set_vent') {
    ventOpen = args.open === true
    return { content: [{ type: 'text', text: `vent ${ventOpen ? 'open' : 'closed'}` }] }
  }
  return { content: [{ type: 'text', text: `no tool ${params.name}` }], isError: true }
})
await server.connect(new StdioServerTransport())
