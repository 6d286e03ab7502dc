/**
 * The agents of a folder as MCP tools (`tea mcp --agents DIR`, `tea serve`'s `/mcp`): one tool per agent file that
 * loads, named after the file (`team/hello.yaml` is `team.hello`), described by the agent's `description`, its
 * input schema from TEA's `state_schema` (key → type name). Calling one starts an ordinary run (its id from the
 * run's store, listed by `tea runs`, resumable by `tea resume`) whose final state is the tool's result. No SDK here.
 */

import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import type { AgentSpec } from '../../agent/types.ts'
import { errorMessage } from '../../core/errors.ts'
import { listAgents, resolveAgent } from '../serve/agents.ts'

/** A name MCP clients take (and tea's own client offers a model): letters, digits, _, - and single dots. */
const TOOL_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/

export interface AgentTool {
  name: string
  description: string
  inputSchema: Record<string, unknown>
  /** The agent file, relative to the folder. */
  file: string
}

/** TEA's type names in a state_schema, as JSON Schema. */
const TYPES: Readonly<Record<string, Record<string, unknown>>> = {
  str: { type: 'string' },
  string: { type: 'string' },
  int: { type: 'integer' },
  integer: { type: 'integer' },
  float: { type: 'number' },
  number: { type: 'number' },
  bool: { type: 'boolean' },
  boolean: { type: 'boolean' },
  list: { type: 'array' },
  array: { type: 'array' },
  dict: { type: 'object' },
  object: { type: 'object' },
}

/** The JSON Schema of an agent's input: each state_schema key, none required (a run's input merges over its initial state). */
export function inputSchemaOf(spec: AgentSpec): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const [key, type] of Object.entries(spec.stateSchema ?? {})) {
    const name = typeof type === 'string' ? type.replace(/^Optional\[(.*)\]$/, '$1').toLowerCase() : ''
    properties[key] = TYPES[name] ?? {}
  }
  return { type: 'object', properties }
}

/** The folder's agents that load, as tools; one that does not load is left out, said through `warn`. */
export async function agentTools(dir: string, registry: Registry, warn: (line: string) => void): Promise<AgentTool[]> {
  const tools: AgentTool[] = []
  for (const { name, file } of listAgents(dir)) {
    const toolName = name.replaceAll('/', '.')
    if (!TOOL_NAME.test(toolName)) {
      warn(`agent ${file} is not offered: its name is not an MCP tool name (letters, digits, _ and -)`)
      continue
    }
    try {
      const spec = await requireAgentLoading(resolveAgent(dir, file), registry)
      tools.push({
        name: toolName,
        description: spec.description ?? `Runs the agent ${spec.name}.`,
        inputSchema: inputSchemaOf(spec),
        file,
      })
    } catch (e) {
      warn(`agent ${file} is not offered: ${errorMessage(e)}`)
    }
  }
  return tools
}

/** The agent file tool `tool` is, inside `dir`, as `tea serve` resolves an agent (no path leads out); undefined for none. */
export function agentFileOf(dir: string, tool: string): string | undefined {
  const found = listAgents(dir).find((a) => a.name.replaceAll('/', '.') === tool)
  return found && resolveAgent(dir, found.file)
}
