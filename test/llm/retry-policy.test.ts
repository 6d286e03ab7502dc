import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { TeaError } from '../../src/core/errors.ts'
import { cancelled } from '../../src/core/signals.ts'
import { RETRY_AFTER_CAP_MS, isTransient, mayRetry, parseRetryAfter, retryDelay } from '../../src/llm/retry-policy.ts'

const http = (status: number, extra: Record<string, unknown> = {}) =>
  new TeaError('LLM_HTTP_ERROR', `HTTP ${status}`, { details: { status, ...extra } })

test('connection failures, cut replies, timeouts, 408, 429 and 5xx are transient', () => {
  assert.ok(isTransient(new TeaError('LLM_UNREACHABLE', 'refused')))
  assert.ok(isTransient(new TeaError('LLM_STREAM_CUT', 'closed the reply after 40 bytes')))
  assert.ok(isTransient(new TeaError('LLM_TIMEOUT', 'slow')))
  for (const s of [408, 429, 500, 502, 503, 504]) assert.ok(isTransient(http(s)), String(s))
})

test('other 4xx, bad replies, bad models, cancellation and foreign errors are not', () => {
  for (const s of [400, 401, 403, 404, 422]) assert.not.ok(isTransient(http(s)), String(s))
  assert.not.ok(isTransient(new TeaError('LLM_BAD_RESPONSE', 'garbage')))
  assert.not.ok(isTransient(new TeaError('LLM_REPLY_TOO_LARGE', 'a 50 MB reply')))
  assert.not.ok(isTransient(new TeaError('LLM_BAD_MODEL', 'x')))
  assert.not.ok(isTransient(cancelled()))
  assert.not.ok(isTransient(new Error('ECONNREFUSED')))
})

test('a transient failure is retried only while no token of the call has been streamed', () => {
  const cut = new TeaError('LLM_STREAM_CUT', 'closed the reply')
  assert.ok(mayRetry(cut, 0))
  assert.not.ok(mayRetry(cut, 1))
  assert.not.ok(mayRetry(new TeaError('LLM_TIMEOUT', 'slow'), 3))
  assert.not.ok(mayRetry(new TeaError('LLM_BAD_RESPONSE', 'garbage'), 0))
})

test('Retry-After is read as seconds or as an HTTP date', () => {
  assert.is(parseRetryAfter('0'), 0)
  assert.is(parseRetryAfter('3'), 3000)
  assert.is(parseRetryAfter('1.5'), 1500)
  const now = Date.parse('2026-01-01T00:00:00Z')
  assert.is(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now), 10_000)
  assert.is(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0)
  assert.is(parseRetryAfter('soon'), undefined)
  assert.is(parseRetryAfter(null), undefined)
})

test("the delay honours the server's Retry-After up to the cap, else backs off with jitter", () => {
  assert.is(retryDelay(0, http(429, { retryAfterMs: 1200 }), 500), 1200)
  assert.is(retryDelay(0, http(429, { retryAfterMs: 3_600_000 }), 500), RETRY_AFTER_CAP_MS)
  for (let retry = 0; retry < 4; retry++) {
    const ceiling = 500 * 2 ** retry
    const d = retryDelay(retry, http(503), 500)
    assert.ok(d >= ceiling / 2 && d <= ceiling, `retry ${retry}: ${d}`)
  }
})

test.run()
