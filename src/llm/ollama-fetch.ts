/**
 * The fetch the `ollama` client is given. The client library leaves four gaps we close here:
 * - its non-streaming requests take no AbortSignal, so a timeout could not cancel them: we add ours to every
 *   request (combined with the library's own signal for streams);
 * - on an HTTP error it prints to stdout and drops `Retry-After`: we turn a non-2xx reply into our own error
 *   before the library sees it;
 * - it reads a body of any size: we count the body as it arrives against `max_reply_bytes` (reply-meter.ts)
 *   and stop reading past it;
 * - a malformed NDJSON line in a stream is logged and skipped, and a stream cut short surfaces as a generic
 *   Error: we validate each line and fail with `LLM_BAD_RESPONSE` instead, and a stream that ends before its
 *   final `done` is reported as cut.
 * Requests go through `httpFetch` (src/core/http.ts): Node's own fetch costs a start ~20–33 ms the first time.
 */

import { parseJson } from '../core/json.ts'
import { errorMessage, TeaError } from '../core/errors.ts'
import { type HttpRequest, httpFetch, replyWith } from '../core/http.ts'
import type { ServerRef } from './failure.ts'
import { ReplyEndedEarly, badResponse, httpError } from './failure.ts'
import type { ReplyMeter } from './failure.ts'
import { meteredStream, readErrorText, readMetered } from './reply-meter.ts'
import { parseRetryAfter } from './retry-policy.ts'

/**
 * The `ollama` client reads only what `HttpReply` has of a Response (its headers go in as a plain object: the
 * build makes its one `instanceof Headers` test leave the global alone, which would load fetch after all).
 */
export function guardedFetch(server: ServerRef, signal: AbortSignal, meter: ReplyMeter): typeof fetch {
  const guarded = async (input: string, init: HttpRequest = {}) => {
    const combined = init.signal ? AbortSignal.any([init.signal, signal]) : signal
    const res = await httpFetch(input, { ...init, signal: combined })
    meter.answered = true
    if (!res.ok) {
      const text = await readErrorText(res)
      throw httpError(server, res.status, ollamaErrorText(text), parseRetryAfter(res.headers.get('retry-after')))
    }
    if (!meter.streaming) {
      const text = await readMetered(res.body, meter, server)
      try {
        parseJson(text, 'the body')
      } catch (e) {
        throw badResponse(server, errorMessage(e), text)
      }
      return replyWith(text, res)
    }
    if (!res.body) throw badResponse(server, 'the reply has no body')
    return replyWith(meteredStream(res.body, meter, server).pipeThrough(ndjsonGuard(server)), res)
  }
  return guarded as unknown as typeof fetch
}

/** Ollama errors are `{"error": "..."}`; fall back to the raw text. */
function ollamaErrorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown }
    if (typeof body.error === 'string') return body.error
  } catch {
    // not JSON: the raw text is the best description we have
  }
  return text
}

/** Re-emits only complete, valid NDJSON lines; errors the stream on the first bad line or a missing `done`. */
function ndjsonGuard(server: ServerRef): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  let buffer = ''
  let sawDone = false
  const check = (line: string): void => {
    let message: unknown
    try {
      message = parseJson(line, 'a streamed line')
    } catch (e) {
      throw badResponse(server, errorMessage(e), line)
    }
    if (typeof message !== 'object' || message === null) throw badResponse(server, 'a streamed line is not an object', line)
    const m = message as { error?: unknown; done?: unknown }
    if (m.error !== undefined) {
      throw new TeaError('LLM_BAD_RESPONSE', `the ${server.kind} at ${server.url} reported an error mid-stream: ${String(m.error)}`, {
        details: { url: server.url },
      })
    }
    if (m.done === true) sawDone = true
  }
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true })
      const lines = buffer.split('\n')
      buffer = lines.pop() ?? ''
      for (const line of lines) {
        if (line.trim() === '') continue
        check(line)
        controller.enqueue(encoder.encode(`${line}\n`))
      }
    },
    flush(controller) {
      buffer += decoder.decode()
      if (buffer.trim() !== '') {
        check(buffer)
        controller.enqueue(encoder.encode(`${buffer}\n`))
      }
      if (!sawDone) throw new ReplyEndedEarly('the stream ended before its final ("done": true) message')
    },
  })
}
