/**
 * `ollama:` models through the `ollama` package's chat API — the only module that imports it. We import the
 * package's `browser` entry: it is the same client without the Node entry's file-system image helpers, which tea
 * never uses. Each attempt builds a fresh client around `guardedFetch`, so the attempt's AbortSignal (timeout or
 * cancellation) reaches every request the library makes.
 */

import { Ollama } from 'ollama/browser'
import type { ChatResponse } from 'ollama/browser'
import { attemptSignal } from './attempt-signal.ts'
import { ollamaEmbed } from './embed-http.ts'
import { resolveOllamaUrl } from './base-url.ts'
import type { ServerRef } from './failure.ts'
import { badResponse, classifyFailure } from './failure.ts'
import { toolArguments } from './tool-calls.ts'
import { guardedFetch } from './ollama-fetch.ts'
import type { ReplyMeter } from './failure.ts'
import { countText, createReplyMeter } from './reply-meter.ts'
import type { LlmProvider, LlmUsage, ProviderReply, ProviderRequest } from './types.ts'

export function createOllamaProvider(env: NodeJS.ProcessEnv): LlmProvider {
  return {
    name: 'ollama',
    embed: (request) => ollamaEmbed(request, env),
    async chat(request) {
      const url = resolveOllamaUrl(request.baseUrl, env)
      const server: ServerRef = {
        kind: 'Ollama server',
        url,
        timeoutMs: request.timeoutMs,
        unreachableHint: 'start it with `ollama serve`, or point OLLAMA_HOST or settings.llm.base_url at a running server',
      }
      const attempt = attemptSignal(request.timeoutMs, request.signal)
      const meter = createReplyMeter(request.maxReplyBytes, request.onToken !== undefined)
      const client = new Ollama({ host: url, fetch: guardedFetch(server, attempt.signal, meter) })
      try {
        return meter.streaming
          ? await chatStreaming(client, request, meter, server)
          : toReply(await client.chat({ ...chatBody(request), stream: false }), meter, server)
      } catch (e) {
        throw classifyFailure(e, server, { timedOut: attempt.timedOut(), aborted: attempt.aborted() }, meter)
      } finally {
        attempt.dispose()
      }
    },
  }
}

function chatBody(request: ProviderRequest) {
  return {
    model: request.model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    ...(request.format === undefined ? {} : { format: request.format }),
    ...(request.keep_alive === undefined ? {} : { keep_alive: request.keep_alive }),
    ...(ollamaOptions(request) && { options: ollamaOptions(request) }),
    ...(request.tools && { tools: request.tools }),
  }
}

/** Ollama's `options`: the agent's own, then temperature, `max_tokens` as `num_predict`, and `stop`. */
function ollamaOptions(request: ProviderRequest): Record<string, unknown> | undefined {
  const options: Record<string, unknown> = { ...request.options }
  if (request.temperature !== undefined) options.temperature = request.temperature
  if (request.maxTokens !== undefined) options.num_predict = request.maxTokens
  if (request.stop !== undefined) options.stop = request.stop
  return Object.keys(options).length ? options : undefined
}

async function chatStreaming(client: Ollama, request: ProviderRequest, meter: ReplyMeter, server: ServerRef): Promise<ProviderReply> {
  const stream = await client.chat({ ...chatBody(request), stream: true })
  let content = ''
  let usage: LlmUsage = { prompt_tokens: 0, completion_tokens: 0 }
  for await (const part of stream) {
    const token = part.message?.content
    if (typeof token === 'string' && token !== '') {
      countText(meter, server, token)
      content += token
      request.onToken?.(token)
      meter.tokens++
    }
    if (part.done) usage = usageOf(part)
  }
  return { content, usage }
}

function toReply(reply: ChatResponse, meter: ReplyMeter, server: ServerRef): ProviderReply {
  const message = (reply as Partial<ChatResponse> | null)?.message
  const content = message?.content
  if (typeof content !== 'string') throw badResponse(server, 'no message.content in the reply', JSON.stringify(reply))
  countText(meter, server, content)
  const calls = message?.tool_calls
  if (!Array.isArray(calls) || calls.length === 0) return { content, usage: usageOf(reply) }
  const toolCalls = calls.map((c) => {
    const f = (c as { function?: { name?: unknown; arguments?: unknown } }).function
    if (typeof f?.name !== 'string') throw badResponse(server, 'a tool call without a function name', JSON.stringify(reply))
    return { name: f.name, arguments: toolArguments(f.arguments, server, JSON.stringify(reply)) }
  })
  return { content, usage: usageOf(reply), toolCalls }
}

function usageOf(reply: Partial<ChatResponse>): LlmUsage {
  return {
    prompt_tokens: typeof reply.prompt_eval_count === 'number' ? reply.prompt_eval_count : 0,
    completion_tokens: typeof reply.eval_count === 'number' ? reply.eval_count : 0,
  }
}
