/**
 * Which failures are worth another attempt, and how long to wait first. Only transient conditions are retried
 * (the server is down or restarting, overloaded, or slow, or it lost the connection part-way through a reply); a
 * 4xx other than 408/429 means the request itself is wrong and repeating it cannot help, and a reply over
 * `max_reply_bytes` would only be as long again.
 *
 * A streamed call is retried only while none of its tokens has been passed on: the tokens of a failed attempt
 * have already reached the event stream, and a second reply after them would read as one garbled reply.
 */

import { isTeaError } from '../core/errors.ts'
import { backoffDelay } from '../core/util.ts'

/** The longest a `Retry-After` header may make us wait; a server asking for more is treated as asking for this. */
export const RETRY_AFTER_CAP_MS = 30_000

export function isTransient(e: unknown): boolean {
  if (!isTeaError(e)) return false
  if (e.code === 'LLM_UNREACHABLE' || e.code === 'LLM_TIMEOUT' || e.code === 'LLM_STREAM_CUT') return true
  if (e.code !== 'LLM_HTTP_ERROR') return false
  const status = e.details?.['status']
  return typeof status === 'number' && (status === 408 || status === 429 || status >= 500)
}

/** Whether a failed attempt may be tried again, given how many tokens the call has passed on so far. */
export function mayRetry(e: unknown, tokensStreamed: number): boolean {
  return tokensStreamed === 0 && isTransient(e)
}

/** Delay before retry number `retry` (0-based): the server's Retry-After when it sent one, else jittered backoff. */
export function retryDelay(retry: number, e: unknown, baseMs: number): number {
  const after = isTeaError(e) ? e.details?.['retryAfterMs'] : undefined
  if (typeof after === 'number' && after >= 0) return Math.min(after, RETRY_AFTER_CAP_MS)
  return backoffDelay(retry, baseMs)
}

/** `Retry-After` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined
  const text = value.trim()
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000)
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
