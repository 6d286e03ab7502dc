/**
 * How a reasoning action talks to the model: the model parameters every reasoning action takes (picked from
 * llm.call's, TEA's spellings included), merged over `settings.llm`, and one call that asks for structured output
 * without depending on it. With `structured` (the default) the call carries the reply's JSON Schema as `format`,
 * which Ollama enforces while decoding; a server that ignores it and answers in prose is not a failure here: the
 * client's "no JSON in the reply" error hands back the text, and the action's parser (parse.ts) takes the answer
 * from delimiters as it would for any unstructured reply.
 */

import * as v from 'valibot'
import { llmFields } from '../actions/llm/params.ts'
import type { ActionContext } from '../actions/types.ts'
import { isTeaError } from '../core/errors.ts'
import { mergeLlmSettings } from '../llm/settings.ts'
import type { ChatMessage, JsonSchema, LlmRequest, ToolCall, ToolDefinition } from '../llm/types.ts'

const picked = v.pick(llmFields, [
  'model',
  'provider',
  'temperature',
  'timeout',
  'max_retries',
  'base_url',
  'api_base',
  'max_tokens',
  'options',
  'keep_alive',
]).entries

/** The model parameters of every reasoning action. */
export const modelEntries = {
  ...picked,
  structured: v.optional(
    v.pipe(
      v.boolean(),
      v.description("Ask the server for JSON in the reply's shape (default true); with false the answer is read from the reply's text."),
    ),
    true,
  ),
}

const modelObject = v.object(modelEntries)
export type ModelParams = v.InferOutput<typeof modelObject>

export interface Reply {
  content: string
  /** The structured reply, when the server gave JSON. */
  parsed?: unknown
  model: string
  toolCalls?: ToolCall[]
}

export interface AskOptions {
  /** A model for this call instead of `p.model` (self_correct's generator and critic). */
  model?: string | undefined
  /** The reply's JSON Schema, sent as `format` when `p.structured`. */
  schema?: JsonSchema
  /** Tools offered through the server's native tool calling. */
  tools?: ToolDefinition[]
}

const MODEL_KEYS = Object.keys(picked) as Array<keyof typeof picked>

export async function ask(ctx: ActionContext, p: ModelParams, messages: ChatMessage[], options: AskOptions = {}): Promise<Reply> {
  // Only the model parameters: an action's own (reason.react's `tools`, its `goal`) are not the model's.
  const call: LlmRequest = { messages }
  for (const key of MODEL_KEYS) if (key !== 'api_base' && p[key] !== undefined) Object.assign(call, { [key]: p[key] })
  const { structured, api_base } = p
  if (options.model !== undefined) call.model = options.model
  if (api_base !== undefined && call.base_url === undefined) call.base_url = api_base
  if (structured && options.schema) call.format = options.schema
  if (options.tools?.length) call.tools = options.tools
  const request: LlmRequest = { ...mergeLlmSettings(ctx.settings.llm, call), messages, signal: ctx.signal }
  if (call.tools) request.tools = call.tools
  try {
    const r = await ctx.llm.call(request)
    const reply: Reply = { content: r.content, model: r.model }
    if (r.parsed !== undefined) reply.parsed = r.parsed
    if (r.tool_calls?.length) reply.toolCalls = r.tool_calls
    return reply
  } catch (e) {
    // Asked for JSON, answered in prose: the parser gets the prose.
    const details = isTeaError(e, 'LLM_BAD_RESPONSE') ? e.details : undefined
    if (typeof details?.content === 'string' && typeof details.model === 'string') return { content: details.content, model: details.model }
    throw e
  }
}

/** A system message and a user message. */
export function conversation(system: string, user: string): ChatMessage[] {
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]
}
