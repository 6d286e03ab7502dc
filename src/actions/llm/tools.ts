import * as v from 'valibot'
import { errorMessage, TeaError } from '../../core/errors.ts'
import type { State } from '../../core/util.ts'
import { mergeLlmSettings } from '../../llm/settings.ts'
import type { ChatMessage, ToolDefinition } from '../../llm/types.ts'
import { defineAction, type ActionContext } from '../types.ts'
import { llmFields, toLlmRequest } from './params.ts'
import { toolDefinition, toolDefs, toolName, type ToolDef } from './tool-defs.ts'

/** The most of one tool result the model is shown (the whole result stays in tool_results). */
const RESULT_CHARS = 16_000
/** The most tool calls one reply may make: each runs an action, and the reply is the model's (hostile input). */
const MAX_CALLS_PER_ROUND = 32

const { format: _format, ...fields } = llmFields.entries
const params = v.pipe(
  v.object({
    ...fields,
    tools: toolDefs,
    tool_choice: v.optional(
      v.pipe(v.string(), v.description('auto (default), none (no tools offered), or a tool name (only that tool offered).')),
      'auto',
    ),
    max_tool_rounds: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50), v.description('The most rounds of tool calls (default 10).')),
      10,
    ),
  }),
  v.check((p) => p.prompt !== undefined || p.messages !== undefined, 'give `prompt` or `messages`'),
)

type Params = v.InferOutput<typeof params>

interface CallRecord {
  id: string
  name: string
  arguments: Record<string, unknown>
}

/**
 * TEA's llm.tools (llm_actions.py): a model call offering tools through the server's native tool calling; each
 * call of a tool with an `action` runs that tea action on the model's arguments (parameters validated, as any
 * call), and the result goes back to the model, round after round, until it answers without calling a tool.
 * Returns TEA's `{content, tool_calls, tool_results, rounds}` (and `warning` when max_tool_rounds ran out). A tool
 * result goes back as a user message naming the call (TEA sends a `tool` message with the call id, which needs
 * the assistant's tool_calls echoed; tea's clients send text turns, understood by Ollama and OpenAI alike).
 */
export const llmTools = defineAction({
  name: 'llm.tools',
  description:
    "Asks the model with tools it may call; each call runs the tool's action and its result goes back to the model. Returns {content, tool_calls, tool_results, rounds}.",
  params,
  async run(p, ctx) {
    const actions = await toolActions(p.tools, ctx)
    const offered = offer(p.tools, p.tool_choice)
    const request = toLlmRequest({ ...p, format: undefined })
    const messages: ChatMessage[] = [...request.messages]
    const calls: CallRecord[] = []
    const results: Array<{ tool_call_id: string; name: string; result: string }> = []
    for (let rounds = 0; rounds < p.max_tool_rounds; ) {
      const reply = await ctx.llm.call({
        ...mergeLlmSettings(ctx.settings.llm, request),
        messages,
        ...(offered.length && { tools: offered }),
        signal: ctx.signal,
      })
      if (!reply.tool_calls?.length) return { content: reply.content, tool_calls: calls, tool_results: results, rounds }
      rounds++
      if (reply.tool_calls.length > MAX_CALLS_PER_ROUND)
        throw new TeaError(
          'LLM_BAD_RESPONSE',
          `llm.tools: the model called ${reply.tool_calls.length} tools in one reply; at most ${MAX_CALLS_PER_ROUND} are run`,
        )
      const these = reply.tool_calls.map((c, i) => ({ id: `call_${rounds}_${i + 1}`, name: c.name, arguments: c.arguments }))
      calls.push(...these)
      messages.push({ role: 'assistant', content: reply.content || JSON.stringify({ tool_calls: these }) })
      for (const call of these) {
        const result = await runTool(call, actions.get(call.name), ctx)
        results.push({ tool_call_id: call.id, name: call.name, result })
        const shown =
          result.length <= RESULT_CHARS ? result : `${result.slice(0, RESULT_CHARS)}… (${result.length - RESULT_CHARS} more characters cut)`
        messages.push({ role: 'user', content: `Result of tool ${call.name} (call ${call.id}): ${shown}` })
      }
    }
    return {
      content: '',
      tool_calls: calls,
      tool_results: results,
      rounds: p.max_tool_rounds,
      warning: `Max tool rounds (${p.max_tool_rounds}) reached`,
    }
  },
})

/**
 * The action of each tool that names one, checked before the model is asked: known to this build, and not an
 * action that runs code when the file forbids inline code (the model would write the code).
 */
async function toolActions(tools: readonly ToolDef[], ctx: ActionContext): Promise<Map<string, string>> {
  const named = tools.filter((t) => t.action !== undefined)
  if (named.length === 0) return new Map()
  // tools.list dispatches: running it loads every action group, so listActions sees the whole build.
  await ctx.invoke('tools.list', {})
  const all = new Map(ctx.listActions().map((a) => [a.name, a]))
  const map = new Map<string, string>()
  for (const t of named) {
    const action = all.get(t.action!)
    if (!action || t.action === 'llm.tools')
      throw new TeaError('INVALID_PARAMS', `llm.tools: tool '${toolName(t)}' names action '${t.action}', which this build does not have`, {
        hint: "'tea actions' lists every action",
      })
    if (action.runsCode && !ctx.settings.allow_inline_code)
      throw new TeaError(
        'INLINE_CODE_FORBIDDEN',
        `llm.tools: tool '${toolName(t)}' runs ${action.name}, which runs code, and settings.allow_inline_code is false`,
      )
    map.set(toolName(t), action.name)
  }
  return map
}

function offer(tools: readonly ToolDef[], choice: string): ToolDefinition[] {
  if (choice === 'none') return []
  const chosen = choice === 'auto' || choice === 'required' ? tools : tools.filter((t) => toolName(t) === choice)
  if (chosen.length === 0) throw new TeaError('INVALID_PARAMS', `llm.tools: tool_choice '${choice}' names no tool of the node`)
  return chosen.map(toolDefinition)
}

/** One tool call's result as the JSON text TEA gives the model: the action's result, its error, or a note. */
async function runTool(call: CallRecord, action: string | undefined, ctx: ActionContext): Promise<string> {
  if (!action) return JSON.stringify({ note: `Tool '${call.name}' called but no action mapped`, arguments: call.arguments })
  try {
    const result: State = await ctx.invoke(action, call.arguments)
    return JSON.stringify(result) ?? 'null'
  } catch (e) {
    if (ctx.signal.aborted) throw e
    return JSON.stringify({ error: errorMessage(e) })
  }
}
