// An MCP server for tests, written with the official SDK and run as a real child process: over stdio by default, or
// over streamable HTTP with `--http` (it prints `port <n>` on stdout once it listens on 127.0.0.1, port 0).
//
// Its tools: add, echo, slow (waits `ms`, reporting progress), crash (the process exits), garbage (writes a line that
// is not JSON-RPC on stdout, stdio only), big (a reply of `bytes` characters). With MCP_STARTS_FILE set, each start
// appends a line to that file, so a test can count how many times a client started it.
// Plain JavaScript so that a test starts it with `node` alone, as a user's server would be started.
import { appendFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const http = process.argv.includes('--http')
if (process.env.MCP_STARTS_FILE) appendFileSync(process.env.MCP_STARTS_FILE, `${process.pid}\n`)

const TOOLS = [
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  },
  {
    name: 'echo',
    description: 'Says the text back.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'slow',
    description: 'Waits ms milliseconds.',
    inputSchema: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
  },
  { name: 'crash', description: 'Ends the server process.', inputSchema: { type: 'object', properties: {} } },
  { name: 'garbage', description: 'Answers with a line that is not JSON-RPC.', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'big',
    description: 'Answers with bytes characters.',
    inputSchema: { type: 'object', properties: { bytes: { type: 'number' } } },
  },
]

function text(t) {
  return { content: [{ type: 'text', text: String(t) }] }
}

function makeServer() {
  const server = new Server({ name: 'test-mcp', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {}
    switch (request.params.name) {
      case 'add':
        return text(Number(args.a) + Number(args.b))
      case 'echo':
        return text(args.text)
      case 'slow': {
        const token = request.params._meta?.progressToken
        const ms = Number(args.ms)
        for (let waited = 0; waited < ms; waited += 50) {
          if (token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: waited, total: ms },
            })
          await new Promise((r) => setTimeout(r, Math.min(50, ms - waited)))
        }
        return text(`waited ${ms}`)
      }
      case 'crash':
        process.exit(3)
        break
      case 'garbage':
        process.stdout.write('this is not json-rpc\n')
        return new Promise(() => {}) // never answers: the client must not wait for it
      case 'big':
        return text('x'.repeat(Number(args.bytes ?? 0)))
      default:
        return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true }
    }
  })
  return server
}

if (http) {
  // One transport and server per request (stateless), the SDK's way of serving many clients.
  const listener = createServer(async (req, res) => {
    const chunks = []
    for await (const c of req) chunks.push(c)
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    const server = makeServer()
    res.on('close', () => {
      transport.close()
      server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(req, res, body)
  })
  listener.listen(0, '127.0.0.1', () => process.stdout.write(`port ${listener.address().port}\n`))
} else {
  await makeServer().connect(new StdioServerTransport())
}
