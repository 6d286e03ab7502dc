/**
 * The tools a ReAct loop may use (AC7): registered actions, named in the node's `tools:` list, offered to the model
 * with their descriptions and JSON Schemas, and run through the registry — a direct call, no HTTP. A name is
 * looked up only when it has the shape of an action name and is on the node's list, so `../../etc/passwd`, an
 * unlisted action or an unknown one is refused with an observation the model can read, and never run.
 *
 * Native tool calling (Ollama's and OpenAI's `tools`) needs function names without dots, so there a tool is
 * offered as `memory__store` and the call mapped back.
 */

import { jsonSchemaOf } from '../actions/json-schema.ts'
import type { Action, ActionContext } from '../actions/types.ts'
import { errorMessage, TeaError } from '../core/errors.ts'
import { isPlainObject, type State } from '../core/util.ts'
import type { ToolDefinition } from '../llm/types.ts'
import type { ToolLine } from './prompts.ts'

/** Dotted names of letters, digits, `_` and `-`: every action name, and nothing with a path in it. */
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*$/

export type ToolLookup = { ok: true; action: Action } | { ok: false; reason: string }

export class Toolbox {
  private readonly actions = new Map<string, Action>()

  /** `names`: the node's `tools:` list; each must be a registered action (checked when the agent loads, too). */
  constructor(
    ctx: Pick<ActionContext, 'listActions'>,
    readonly names: readonly string[],
  ) {
    const all = new Map(ctx.listActions().map((a) => [a.name, a]))
    for (const name of names) {
      const action = all.get(name)
      if (!action) throw new TeaError('UNKNOWN_ACTION', `tools: '${name}' is not an action of this build`)
      this.actions.set(name, action)
    }
  }

  lookup(name: unknown): ToolLookup {
    if (typeof name !== 'string' || !TOOL_NAME.test(name))
      return { ok: false, reason: `${JSON.stringify(name)} is not a tool name; nothing was run` }
    const action = this.actions.get(name)
    if (!action) {
      const offered = this.names.length ? this.names.join(', ') : 'none'
      return { ok: false, reason: `there is no tool '${name}'; nothing was run. The tools are: ${offered}` }
    }
    return { ok: true, action }
  }

  lines(): ToolLine[] {
    return [...this.actions.values()].map((a) => ({ name: a.name, description: a.description, parameters: jsonSchemaOf(a.params) }))
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
   * goes to the tool's one required parameter, when it has exactly one. Failures are observations, not errors.
   */
  async run(ctx: ActionContext, action: Action, input: unknown, state: State, timeoutMs: number): Promise<{ ok: boolean; value: unknown }> {
    const params = toolParams(action, input)
    if (!params.ok) return { ok: false, value: params.reason }
    try {
      return { ok: true, value: await ctx.invoke(action.name, params.value, state, { timeoutMs }) }
    } catch (e) {
      if (ctx.signal.aborted) throw e
      return { ok: false, value: `${action.name} failed: ${errorMessage(e)}` }
    }
  }
}

export function nativeName(name: string): string {
  return name.replaceAll('.', '__')
}

export function fromNativeName(name: string): string {
  return name.replaceAll('__', '.')
}

function toolParams(action: Action, input: unknown): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (input === undefined || input === null) return { ok: true, value: {} }
  if (isPlainObject(input)) return { ok: true, value: input }
  const schema = jsonSchemaOf(action.params)
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : []
  if (required.length === 1) return { ok: true, value: { [required[0]!]: input } }
  return {
    ok: false,
    reason: `${action.name} takes an object of parameters (${JSON.stringify(schema.properties ?? {})}), not ${JSON.stringify(input)}; nothing was run`,
  }
}
