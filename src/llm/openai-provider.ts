/**
 * `openai:` models: any server speaking OpenAI's chat-completions API (llama.cpp's server, vLLM, LM Studio…),
 * through the global `fetch`. Structured output uses `response_format` (`json_schema` with `strict`, or
 * `json_object` for plain JSON); streaming uses server-sent events and asks for a final usage chunk. Every body
 * is read through the reply meter (reply-meter.ts), which holds it to `max_reply_bytes`.
 */

import { parseJson } from '../core/json.ts'
import { errorMessage, TeaError } from '../core/errors.ts'
import { attemptSignal } from './attempt-signal.ts'
import { openAiEmbed } from './embed-http.ts'
import { httpFetch } from '../core/http.ts'
import { chatCompletionsUrl, resolveOpenAiUrl } from './base-url.ts'
import type { ServerRef } from './failure.ts'
import { toolArguments } from './tool-calls.ts'
import { ReplyEndedEarly, badResponse, classifyFailure, httpError } from './failure.ts'
import type { ReplyMeter } from './failure.ts'
import { countText, createReplyMeter, meteredStream, readErrorText, readMetered } from './reply-meter.ts'
import { parseRetryAfter } from './retry-policy.ts'
import { sseData } from './sse.ts'
import type { LlmProvider, LlmUsage, ProviderReply, ProviderRequest } from './types.ts'

export function createOpenAiProvider(env: NodeJS.ProcessEnv): LlmProvider {
  return {
    name: 'openai',
    embed: (request) => openAiEmbed(request, env),
    async chat(request) {
      const base = resolveOpenAiUrl(request.baseUrl, env)
      if (base === undefined) {
        throw new TeaError('LLM_BAD_MODEL', `model openai:${request.model} needs a server, and none is configured`, {
          hint: 'set OPENAI_BASE_URL (e.g. http://127.0.0.1:8080) or settings.llm.base_url',
          details: { model: `openai:${request.model}` },
        })
      }
      const server: ServerRef = {
        kind: 'OpenAI-compatible server',
        url: base,
        timeoutMs: request.timeoutMs,
        unreachableHint: 'start the server, or point OPENAI_BASE_URL or settings.llm.base_url at a running one',
      }
      const attempt = attemptSignal(request.timeoutMs, request.signal)
      const meter = createReplyMeter(request.maxReplyBytes, request.onToken !== undefined)
      const apiKey = request.apiKey ?? env['OPENAI_API_KEY']
      try {
        const res = await httpFetch(chatCompletionsUrl(base), {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: request.onToken ? 'text/event-stream' : 'application/json',
            ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
          },
          body: JSON.stringify(requestBody(request)),
          signal: attempt.signal,
        })
        meter.answered = true
        if (!res.ok) {
          const text = await readErrorText(res)
          throw httpError(server, res.status, openAiErrorText(text), parseRetryAfter(res.headers.get('retry-after')))
        }
        if (!request.onToken) return parseCompletion(await readMetered(res.body, meter, server), meter, server)
        if (!res.body) throw badResponse(server, 'the reply has no body')
        return await readStream(meteredStream(res.body, meter, server), request.onToken, meter, server)
      } catch (e) {
        throw classifyFailure(e, server, { timedOut: attempt.timedOut(), aborted: attempt.aborted() }, meter)
      } finally {
        attempt.dispose()
      }
    },
  }
}

function requestBody(request: ProviderRequest): Record<string, unknown> {
  const format = request.format
  return {
    // Model options first, so the fields tea sets below win over a same-named option.
    ...request.options,
    model: request.model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    stream: request.onToken !== undefined,
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
    ...(request.stop === undefined ? {} : { stop: request.stop }),
    ...(request.onToken ? { stream_options: { include_usage: true } } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.tools && { tools: request.tools }),
    ...(format === undefined
      ? {}
      : format === 'json'
        ? { response_format: { type: 'json_object' } }
        : { response_format: { type: 'json_schema', json_schema: { name: 'reply', schema: format, strict: true } } }),
  }
}

interface Completion {
  choices?: Array<{
    message?: { content?: unknown; tool_calls?: unknown }
    delta?: { content?: unknown }
    finish_reason?: unknown
  }>
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null
  error?: unknown
}

function parseCompletion(text: string, meter: ReplyMeter, server: ServerRef): ProviderReply {
  const body = completionOf(text, server)
  const message = body.choices?.[0]?.message
  const calls = Array.isArray(message?.tool_calls) && message.tool_calls.length > 0 ? (message.tool_calls as unknown[]) : undefined
  // With tool calls, content is often null.
  const content = calls && (message?.content === null || message?.content === undefined) ? '' : message?.content
  if (typeof content !== 'string') throw badResponse(server, 'no choices[0].message.content in the reply', text)
  countText(meter, server, content)
  if (!calls) return { content, usage: usageOf(body.usage) }
  const toolCalls = calls.map((c) => {
    const f = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function
    if (typeof f?.name !== 'string') throw badResponse(server, 'a tool call without a function name', text)
    return { name: f.name, arguments: toolArguments(f.arguments, server, text) }
  })
  return { content, usage: usageOf(body.usage), toolCalls }
}

async function readStream(
  body: ReadableStream<Uint8Array>,
  onToken: (t: string) => void,
  meter: ReplyMeter,
  server: ServerRef,
): Promise<ProviderReply> {
  let content = ''
  let usage: LlmUsage = { prompt_tokens: 0, completion_tokens: 0 }
  let finished = false
  for await (const data of sseData(body)) {
    if (data.trim() === '[DONE]') {
      finished = true
      break
    }
    const chunk = completionOf(data, server)
    if (chunk.error !== undefined) throw badResponse(server, `the stream carried an error: ${JSON.stringify(chunk.error)}`)
    const choice = chunk.choices?.[0]
    const token = choice?.delta?.content
    if (typeof token === 'string' && token !== '') {
      countText(meter, server, token)
      content += token
      onToken(token)
      meter.tokens++
    }
    if (choice?.finish_reason) finished = true
    if (chunk.usage) usage = usageOf(chunk.usage)
  }
  // Some servers omit `[DONE]`; a `finish_reason` is as good. Neither means the stream was cut short.
  if (!finished) throw new ReplyEndedEarly('the stream ended without a finish_reason or [DONE]')
  return { content, usage }
}

function completionOf(text: string, server: ServerRef): Completion {
  let value: unknown
  try {
    value = parseJson(text, 'the body')
  } catch (e) {
    throw badResponse(server, errorMessage(e), text)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badResponse(server, 'the body is not a JSON object', text)
  return value as Completion
}

function usageOf(usage: Completion['usage']): LlmUsage {
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
  return { prompt_tokens: n(usage?.prompt_tokens), completion_tokens: n(usage?.completion_tokens) }
}

/** OpenAI-style errors are `{"error": {"message": …}}`; llama.cpp and others vary, so fall back to the text. */
function openAiErrorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown }
    if (typeof body.error === 'string') return body.error
    if (typeof body.error?.message === 'string') return body.error.message
    if (typeof body.message === 'string') return body.message
  } catch {
    // not JSON: keep the raw text
  }
  return text
}
