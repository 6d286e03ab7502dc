/**
 * Turns whatever one attempt threw (undici network errors, aborts, JSON syntax errors, HTTP statuses) into a
 * `TeaError` with one clear line naming the server and its URL. Cancellation is not a failure: it becomes the
 * `cancelled()` control signal so nobody retries it (STYLE 8). A lost connection is LLM_UNREACHABLE only until
 * the server has answered; after that it is LLM_STREAM_CUT, with what had arrived of the reply.
 */

import { TeaError, errorMessage, isTeaError } from '../core/errors.ts'
import { cancelled, isControlSignal } from '../core/signals.ts'

/** How much of a reply has arrived, counted by reply-meter.ts as it is read. */
export interface ReplyMeter {
  /** `max_reply_bytes`: the most bytes of reply text accepted. */
  readonly cap: number
  /** Tokens go to `onToken` as they arrive. */
  readonly streaming: boolean
  /** The response head (status and headers) has arrived. */
  answered: boolean
  /** Body bytes received, framing included. */
  bytes: number
  /** UTF-8 bytes of reply text counted so far. */
  textBytes: number
  /** Tokens passed to `onToken`. */
  tokens: number
}

export interface ServerRef {
  /** `Ollama server`, `OpenAI-compatible server`. */
  kind: string
  /** The base URL the attempt used. */
  url: string
  timeoutMs: number
  /** A one-line fix for an unreachable server. */
  unreachableHint?: string
}

export function unreachable(server: ServerRef, reason: string, cause?: unknown): TeaError {
  return new TeaError('LLM_UNREACHABLE', `cannot reach the ${server.kind} at ${server.url}: ${reason}`, {
    cause,
    details: { url: server.url, reason },
    ...(server.unreachableHint ? { hint: server.unreachableHint } : {}),
  })
}

export function timedOut(server: ServerRef, reply: ReplyMeter): TeaError {
  const seconds = Number((server.timeoutMs / 1000).toFixed(3))
  const started = reply.bytes > 0
  const what = started ? `did not finish its reply within ${seconds} s (it sent ${received(reply)})` : `did not answer within ${seconds} s`
  return new TeaError('LLM_TIMEOUT', `the ${server.kind} at ${server.url} ${what}`, {
    details: { url: server.url, timeout: seconds, ...(started ? { bytes: reply.bytes, tokens: reply.tokens } : {}) },
    hint: 'raise settings.llm.timeout (seconds) or with.timeout on the node, or use a smaller model',
  })
}

export function httpError(server: ServerRef, status: number, body: string, retryAfterMs?: number): TeaError {
  const short = oneLine(body, 200)
  return new TeaError('LLM_HTTP_ERROR', `the ${server.kind} at ${server.url} answered HTTP ${status}${short ? `: ${short}` : ''}`, {
    details: { url: server.url, status, body: short, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) },
  })
}

export function badResponse(server: ServerRef, what: string, raw?: string): TeaError {
  const sample = raw === undefined ? '' : ` (received: ${JSON.stringify(oneLine(raw, 200))})`
  return new TeaError('LLM_BAD_RESPONSE', `the ${server.kind} at ${server.url} sent a malformed reply: ${what}${sample}`, {
    details: { url: server.url },
  })
}

export const REPLY_CAP_HINT =
  'raise settings.llm.max_reply_bytes (or with.max_reply_bytes on the node) if replies this long are expected, or ask the model for a shorter reply'

export function replyTooLarge(server: ServerRef, meter: ReplyMeter): TeaError {
  return new TeaError(
    'LLM_REPLY_TOO_LARGE',
    `the ${server.kind} at ${server.url} sent a reply larger than max_reply_bytes (${formatBytes(meter.cap)}); tea stopped reading it after ${formatBytes(meter.bytes)}`,
    { details: { url: server.url, max_reply_bytes: meter.cap, bytes: meter.bytes }, hint: REPLY_CAP_HINT },
  )
}

/** A reply the server began (its response head arrived) and did not finish: a lost connection or an early end. */
export function streamCut(server: ServerRef, meter: ReplyMeter, reason: string, cause?: unknown): TeaError {
  return new TeaError('LLM_STREAM_CUT', `the ${server.kind} at ${server.url} closed the reply after ${received(meter)}: ${reason}`, {
    cause,
    details: { url: server.url, bytes: meter.bytes, tokens: meter.tokens, reason },
  })
}

/** `180 bytes (3 tokens)` for a streamed reply, `180 bytes` for one that is not streamed. */
function received(meter: ReplyMeter): string {
  return `${meter.bytes} bytes${meter.streaming ? ` (${meter.tokens} token${meter.tokens === 1 ? '' : 's'})` : ''}`
}

/**
 * Thrown where a streamed reply is found to have ended without its final message. `classifyFailure` turns it into
 * LLM_STREAM_CUT with the attempt's counts as they stand when the failure reaches the provider (a stream
 * transform notices the end before the consumer has taken every token queued ahead of it), or into
 * LLM_BAD_RESPONSE when the body was empty: a server that sends nothing at all did not cut anything short.
 */
export class ReplyEndedEarly extends Error {
  override readonly name = 'ReplyEndedEarly'
}

/**
 * What an attempt's failure means. `timedOut`/`aborted` say which of our own signals fired, because an abort
 * surfaces from fetch as the same AbortError (or as a mid-body `terminated`) whatever its reason. `reply` says
 * whether the server had answered: after that, a lost connection is a cut reply, not an unreachable server.
 */
export function classifyFailure(e: unknown, server: ServerRef, fired: { timedOut: boolean; aborted: boolean }, reply: ReplyMeter): unknown {
  if (fired.aborted || isControlSignal(e)) return isControlSignal(e) ? e : cancelled('LLM call cancelled')
  if (fired.timedOut) return timedOut(server, reply)
  if (isTeaError(e)) return e
  if (e instanceof ReplyEndedEarly)
    return reply.bytes > 0 ? streamCut(server, reply, e.message) : badResponse(server, 'the reply body is empty')
  const code = causeCode(e)
  const reason = code ? NETWORK_REASONS[code] : undefined
  const lost = reason ?? (e instanceof TypeError && e.message === 'terminated' ? 'connection closed' : undefined)
  if (lost) return reply.answered ? streamCut(server, reply, lost, e) : unreachable(server, lost, e)
  if (e instanceof TypeError && e.message === 'fetch failed')
    return unreachable(server, errorMessage((e as { cause?: unknown }).cause ?? e), e)
  if (e instanceof SyntaxError) return badResponse(server, `the body is not valid JSON (${e.message})`)
  // Anything else came from inside the client library (e.g. "Missing body"): still a reply we cannot use.
  return new TeaError('LLM_BAD_RESPONSE', `the ${server.kind} at ${server.url} sent a reply tea cannot use: ${errorMessage(e)}`, {
    cause: e,
    details: { url: server.url },
  })
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection reset',
  UND_ERR_CLOSED: 'connection reset',
  ECONNABORTED: 'connection aborted',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
}

/** The first `code` along the `cause` chain (undici nests the socket error one or two levels down). */
function causeCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && typeof cur === 'object' && depth < 5; depth++) {
    const code = (cur as { code?: unknown }).code
    if (typeof code === 'string' && code in NETWORK_REASONS) return code
    const errors = (cur as { errors?: unknown }).errors
    // Dual-stack connects fail with an AggregateError holding one error per address.
    if (Array.isArray(errors) && errors.length > 0) cur = errors[0]
    else cur = (cur as { cause?: unknown }).cause
  }
  return undefined
}

/** `4 MiB`, `1.5 MiB`, `512 KiB`, `900 bytes`. */
export function formatBytes(n: number): string {
  const round = (v: number): string => String(Number(v.toFixed(1)))
  if (n >= 1024 * 1024) return `${round(n / (1024 * 1024))} MiB`
  if (n >= 1024) return `${round(n / 1024)} KiB`
  return `${n} bytes`
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}
