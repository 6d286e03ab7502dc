/** `tea mcp` (docs/integrations.md, MCP): the agents of a folder as the tools of an MCP server (../mcp.ts, loaded on use). */

import { defineCommand } from '../command.ts'
import { DATA_DIR, MODEL, REPLAY } from './flags.ts'

export const mcp = defineCommand({
  name: 'mcp',
  summary: 'serve the agents of a folder as MCP tools over stdin and stdout',
  description: `An MCP server (stdio) for MCP clients: another tea's tools.mcp or its ReAct loop, an editor, a desktop
assistant. Each agent file in DIR that loads is a tool named after the file (team/hello.yaml: team.hello), its
input schema from the agent's state_schema. A call is an ordinary run, stored in --data-dir ('tea runs' lists it,
'tea resume' continues it); its result is the final state, and each node's end is a progress notification.
Over HTTP, 'tea serve' offers the same at /mcp.`,
  flags: {
    agents: { type: 'string', value: 'DIR', required: true, description: 'the agents to offer as tools' },
    'data-dir': DATA_DIR,
    model: MODEL,
    replay: REPLAY,
  },
  notes: 'stdout carries the protocol; warnings go to stderr. Exit codes: 0 when the client closes stdin or on SIGTERM, 2 bad usage.',
  run: async (input, io) => (await import('../mcp.ts')).mcpCommand(input, io),
})
