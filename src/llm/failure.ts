/**
 * Turns whatever one attempt threw (undici network errors, aborts, JSON syntax errors, HTTP statuses) into a
 * `TeaError` with one clear line naming the server and its URL. Cancellation is not a failure: it becomes the
 * `cancelled()` control signal so nobody retries it (STYLE 8).
 */

import { TeaError, errorMessage, isTeaError } from '../core/errors.ts'
import { cancelled, isControlSignal } from '../core/signals.ts'

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

export function timedOut(server: ServerRef): TeaError {
  const seconds = Number((server.timeoutMs / 1000).toFixed(3))
  return new TeaError('LLM_TIMEOUT', `the ${server.kind} at ${server.url} did not answer within ${seconds} s`, {
    details: { url: server.url, timeout: seconds },
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

/**
 * What an attempt's failure means. `timedOut`/`aborted` say which of our own signals fired, because an abort
 * surfaces from fetch as the same AbortError (or as a mid-body `terminated`) whatever its reason.
 */
export function classifyFailure(e: unknown, server: ServerRef, fired: { timedOut: boolean; aborted: boolean }): unknown {
  if (fired.aborted || isControlSignal(e)) return isControlSignal(e) ? e : cancelled('LLM call cancelled')
  if (fired.timedOut) return timedOut(server)
  if (isTeaError(e)) return e
  const code = causeCode(e)
  const reason = code ? NETWORK_REASONS[code] : undefined
  if (reason) return unreachable(server, reason, e)
  if (e instanceof TypeError && e.message === 'terminated') return unreachable(server, 'connection reset while reading the reply', e)
  if (e instanceof TypeError && e.message === 'fetch failed') return unreachable(server, errorMessage((e as { cause?: unknown }).cause ?? e), e)
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

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}
