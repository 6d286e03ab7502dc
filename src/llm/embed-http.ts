/**
 * Embeddings over HTTP, for both server kinds: Ollama's `POST /api/embed` ({model, input} → {embeddings}) and
 * OpenAI's `POST /v1/embeddings` ({model, input} → {data: [{embedding, index}]}). One attempt, with the same
 * timeout, cancellation and failure reporting as a chat call (failure.ts); the reply is read up to 64 MiB.
 */

import { parseJson } from '../core/json.ts'
import { attemptSignal } from './attempt-signal.ts'
import { embeddingsUrl, resolveOllamaUrl, resolveOpenAiUrl } from './base-url.ts'
import { badResponse, classifyFailure, httpError, type ServerRef } from './failure.ts'
import { httpFetch } from '../core/http.ts'
import { createReplyMeter, readErrorText, readMetered } from './reply-meter.ts'
import type { ProviderEmbedRequest } from './types.ts'
import { errorMessage, TeaError } from '../core/errors.ts'

const MAX_EMBED_REPLY = 64 * 1024 * 1024

export function ollamaEmbed(request: ProviderEmbedRequest, env: NodeJS.ProcessEnv): Promise<number[][]> {
  const url = resolveOllamaUrl(request.baseUrl, env)
  const server: ServerRef = {
    kind: 'Ollama server',
    url,
    timeoutMs: request.timeoutMs,
    unreachableHint: 'start it with `ollama serve`, or point OLLAMA_HOST at it',
  }
  return post(server, `${url}/api/embed`, {}, request, (reply) => (reply as { embeddings?: unknown }).embeddings)
}

export function openAiEmbed(request: ProviderEmbedRequest, env: NodeJS.ProcessEnv): Promise<number[][]> {
  const base = resolveOpenAiUrl(request.baseUrl, env)
  if (base === undefined) {
    return Promise.reject(
      new TeaError('LLM_BAD_MODEL', `model openai:${request.model} needs a server, and none is configured`, {
        hint: 'set OPENAI_BASE_URL or settings.llm.base_url',
      }),
    )
  }
  const server: ServerRef = { kind: 'OpenAI-compatible server', url: base, timeoutMs: request.timeoutMs }
  const key = request.apiKey ?? env.OPENAI_API_KEY
  return post(server, embeddingsUrl(base), key ? { authorization: `Bearer ${key}` } : {}, request, (reply) => {
    const data = (reply as { data?: Array<{ embedding?: unknown; index?: number }> }).data
    return Array.isArray(data) ? [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding) : undefined
  })
}

async function post(
  server: ServerRef,
  url: string,
  headers: Record<string, string>,
  request: ProviderEmbedRequest,
  pick: (reply: unknown) => unknown,
): Promise<number[][]> {
  const attempt = attemptSignal(request.timeoutMs, request.signal)
  const meter = createReplyMeter(MAX_EMBED_REPLY, false)
  try {
    const res = await httpFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: request.model, input: request.input }),
      signal: attempt.signal,
    })
    meter.answered = true
    if (!res.ok) throw httpError(server, res.status, await readErrorText(res))
    const text = await readMetered(res.body, meter, server)
    let reply: unknown
    try {
      reply = parseJson(text, 'the embeddings reply')
    } catch (e) {
      throw badResponse(server, errorMessage(e), text)
    }
    const vectors = pick(reply)
    if (
      !Array.isArray(vectors) ||
      vectors.length !== request.input.length ||
      !vectors.every((e) => Array.isArray(e) && e.every((x) => typeof x === 'number'))
    ) {
      throw badResponse(server, `the embeddings reply does not hold ${request.input.length} vector(s) of numbers`, text.slice(0, 200))
    }
    return vectors as number[][]
  } catch (e) {
    throw classifyFailure(e, server, { timedOut: attempt.timedOut(), aborted: attempt.aborted() }, meter)
  } finally {
    attempt.dispose()
  }
}
