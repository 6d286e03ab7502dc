/**
 * Wire formats the fake model server speaks: Ollama's `/api/chat` and `/api/generate` (one JSON body, or NDJSON
 * lines ending with a `"done": true` line) and OpenAI's `/v1/chat/completions` (one JSON body, or server-sent
 * events ending with `data: [DONE]`). Shapes follow what the real servers send, trimmed to the fields clients read.
 */

export type Api = 'ollama-chat' | 'ollama-generate' | 'openai-chat'

export interface Usage {
  prompt_tokens: number
  completion_tokens: number
}

const CREATED = '2026-01-01T00:00:00.000Z'

/** A tool call the server answers with: Ollama sends its arguments as an object, OpenAI as a JSON string. */
export interface FakeToolCall {
  name: string
  arguments: Record<string, unknown>
}

export function fullBody(api: Api, model: string, content: string, usage: Usage, toolCalls?: FakeToolCall[]): string {
  if (api === 'openai-chat') {
    const calls = toolCalls?.map((c, i) => ({
      id: `call_${i}`,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }))
    const message = calls ? { role: 'assistant', content: content || null, tool_calls: calls } : { role: 'assistant', content }
    return JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1767225600,
      model,
      choices: [{ index: 0, message, finish_reason: calls ? 'tool_calls' : 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    })
  }
  const part = ollamaPart(api, model, content, true)
  if (toolCalls && api === 'ollama-chat')
    (part.message as Record<string, unknown>).tool_calls = toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } }))
  return JSON.stringify({ ...part, ...ollamaDone(usage) })
}

/** The pieces of a streamed reply, in order, each a complete wire unit (an NDJSON line or an SSE event). */
export function streamParts(
  api: Api,
  model: string,
  tokens: string[],
  usage: Usage,
  includeUsage: boolean,
): { tokens: string[]; end: string[] } {
  if (api === 'openai-chat') {
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): string =>
      sse({
        id: 'chatcmpl-fake',
        object: 'chat.completion.chunk',
        created: 1767225600,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      })
    const end = [chunk({}, 'stop')]
    if (includeUsage)
      end.push(sse({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1767225600, model, choices: [], usage }))
    end.push('data: [DONE]\n\n')
    return { tokens: tokens.map((t, i) => chunk(i === 0 ? { role: 'assistant', content: t } : { content: t }, null)), end }
  }
  return {
    tokens: tokens.map((t) => `${JSON.stringify(ollamaPart(api, model, t, false))}\n`),
    end: [`${JSON.stringify({ ...ollamaPart(api, model, '', true), ...ollamaDone(usage) })}\n`],
  }
}

export function errorBody(api: Api, status: number, message: string): string {
  return api === 'openai-chat'
    ? JSON.stringify({ error: { message, type: status === 429 ? 'rate_limit_error' : 'server_error', code: status } })
    : JSON.stringify({ error: message })
}

export function contentType(api: Api, stream: boolean): string {
  if (!stream) return 'application/json; charset=utf-8'
  return api === 'openai-chat' ? 'text/event-stream' : 'application/x-ndjson'
}

/** Splits text into word-ish tokens that concatenate back to it exactly. */
export function splitTokens(text: string): string[] {
  return text.match(/\s*\S+|\s+/g) ?? []
}

function ollamaPart(api: Api, model: string, content: string, done: boolean): Record<string, unknown> {
  const body = api === 'ollama-generate' ? { response: content } : { message: { role: 'assistant', content } }
  return { model, created_at: CREATED, ...body, done }
}

function ollamaDone(usage: Usage): Record<string, unknown> {
  return {
    done_reason: 'stop',
    total_duration: 1_000_000,
    load_duration: 1000,
    prompt_eval_count: usage.prompt_tokens,
    prompt_eval_duration: 1000,
    eval_count: usage.completion_tokens,
    eval_duration: 1000,
  }
}

function sse(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`
}
