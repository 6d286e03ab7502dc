/**
 * The tools a ReAct loop may use (AC7): registered actions, named in the node's `tools:` list, offered to the model
 * with their descriptions and JSON Schemas, and run through the registry — a direct call, no HTTP; and the tools
 * of the agent's MCP servers the list names (`mcp.<server>.<tool>`, or `mcp.<server>` for all of them), run
 * through tools.mcp. A name is
 * looked up only when it has the shape of an action name and is on the node's list, so `../../etc/passwd`, an
 * unlisted action or an unknown one is refused with an observation the model can read, and never run.
 *
 * Native tool calling (Ollama's and OpenAI's `tools`) needs function names without dots, so there a tool is
 * offered as `memory__store` and the call mapped back.
 */

import { jsonSchemaOf } from '../actions/json-schema.ts'
import { isMcpToolName, mcpTools, type NamedMcpTool } from '../actions/tools/mcp/named-tools.ts'
import type { ActionContext } from '../actions/types.ts'
import { errorMessage, TeaError } from '../core/errors.ts'
import { isPlainObject, type State } from '../core/util.ts'
import type { ToolDefinition } from '../llm/types.ts'
import type { ToolLine } from './prompts.ts'

/** Dotted names of letters, digits, `_` and `-`: every action name, and nothing with a path in it. */
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*$/

/** A tool the loop may offer: one of tea's actions, or a tool of one of the agent's MCP servers (`mcp.<server>.<tool>`). */
export interface Tool {
  name: string
  description: string
  /** JSON Schema of its parameters. */
  parameters: Record<string, unknown>
  /** For an MCP tool: which server and tool tools.mcp calls. */
  mcp?: { server: string; tool: string }
}

export type ToolLookup = { ok: true; tool: Tool } | { ok: false; reason: string }

export class Toolbox {
  private readonly tools = new Map<string, Tool>()

  /**
   * `names`: the node's `tools:` list; each must be a registered action (checked when the agent loads, too), or one
   * of `mcp`, the MCP tools the list names (`Toolbox.open` lists them).
   */
  constructor(
    ctx: Pick<ActionContext, 'listActions'>,
    readonly names: readonly string[],
    mcp: readonly NamedMcpTool[] = [],
  ) {
    const all = new Map(ctx.listActions().map((a) => [a.name, a]))
    for (const name of names) {
      if (isMcpToolName(name)) continue
      const action = all.get(name)
      if (!action) throw new TeaError('UNKNOWN_ACTION', `tools: '${name}' is not an action of this build`)
      this.tools.set(name, { name, description: action.description, parameters: jsonSchemaOf(action.params) })
    }
    for (const t of mcp)
      this.tools.set(t.name, {
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        mcp: { server: t.server, tool: t.tool },
      })
  }

  /** The toolbox of `names`, the MCP tools among them listed from their servers (which starts them). */
  static async open(ctx: Pick<ActionContext, 'listActions' | 'settings' | 'signal'>, names: readonly string[]): Promise<Toolbox> {
    const mcpNames = names.filter(isMcpToolName)
    const mcp = mcpNames.length ? await mcpTools(ctx.settings, mcpNames, ctx.signal) : []
    return new Toolbox(ctx, names, mcp)
  }

  lookup(name: unknown): ToolLookup {
    if (typeof name !== 'string' || !TOOL_NAME.test(name))
      return { ok: false, reason: `${JSON.stringify(name)} is not a tool name; nothing was run` }
    const tool = this.tools.get(name)
    if (!tool) {
      const offered = this.tools.size ? [...this.tools.keys()].join(', ') : 'none'
      return { ok: false, reason: `there is no tool '${name}'; nothing was run. The tools are: ${offered}` }
    }
    return { ok: true, tool }
  }

  lines(): ToolLine[] {
    return [...this.tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))
  }

  /** The tools in the shape Ollama's and OpenAI's chat APIs take, plus `finish`. */
  native(): ToolDefinition[] {
    const tools: ToolDefinition[] = this.lines().map((t) => ({
      type: 'function',
      function: { name: nativeName(t.name), description: t.description, parameters: t.parameters as Record<string, unknown> },
    }))
    tools.push({
      type: 'function',
      function: {
        name: 'finish',
        description: 'Give the final answer and stop.',
        parameters: { type: 'object', properties: { answer: { description: 'The final answer' } }, required: ['answer'] },
      },
    })
    return tools
  }

  /**
   * Runs a tool on `input` with a time limit and returns what the model should see. Input given as a bare value
   * goes to the tool's one required parameter, when it has exactly one. Failures are observations, not errors. An
   * MCP tool runs through tools.mcp; the model sees its result, or the error the tool reported.
   */
  async run(ctx: ActionContext, tool: Tool, input: unknown, state: State, timeoutMs: number): Promise<{ ok: boolean; value: unknown }> {
    const params = toolParams(tool, input)
    if (!params.ok) return { ok: false, value: params.reason }
    try {
      if (!tool.mcp) return { ok: true, value: await ctx.invoke(tool.name, params.value, state, { timeoutMs }) }
      const call = { ...(params.value as State), server: tool.mcp.server, tool: tool.mcp.tool }
      const r = (await ctx.invoke('tools.mcp', call, state, { timeoutMs })) as { success?: boolean; result?: unknown; error?: unknown }
      return r.success === false ? { ok: false, value: `${tool.name} failed: ${String(r.error)}` } : { ok: true, value: r.result }
    } catch (e) {
      if (ctx.signal.aborted) throw e
      return { ok: false, value: `${tool.name} failed: ${errorMessage(e)}` }
    }
  }
}

export function nativeName(name: string): string {
  return name.replaceAll('.', '__')
}

export function fromNativeName(name: string): string {
  return name.replaceAll('__', '.')
}

function toolParams(tool: Tool, input: unknown): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (input === undefined || input === null) return { ok: true, value: {} }
  if (isPlainObject(input)) return { ok: true, value: input }
  const schema = tool.parameters
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : []
  if (required.length === 1) return { ok: true, value: { [required[0]!]: input } }
  return {
    ok: false,
    reason: `${tool.name} takes an object of parameters (${JSON.stringify(schema.properties ?? {})}), not ${JSON.stringify(input)}; nothing was run`,
  }
}
