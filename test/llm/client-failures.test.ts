/**
 * Timeouts, transient-only retries, and failure reporting, for both network providers through the fake model
 * server. Backoff is shortened (backoffBaseMs) and timeouts are ~200 ms so the file stays fast.
 */

import { createServer } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { TeaError } from '../../src/core/errors.ts'
import { isTeaError } from '../../src/core/errors.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import type { LlmClient } from '../../src/llm/types.ts'
import type { FakeModelServer } from '../support/fake-model-server.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { teaRejection } from '../support/expect.ts'

const messages = [{ role: 'user' as const, content: 'ping' }]

/** A port nothing listens on: bind one, note it, close it. */
async function closedPort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((done) => srv.listen(0, '127.0.0.1', done))
  const port = (srv.address() as { port: number }).port
  await new Promise((done) => srv.close(done))
  return port
}

for (const provider of ['ollama', 'openai'] as const) {
  const t = suite<{ server: FakeModelServer; client: LlmClient; model: string }>(`llm client failures: ${provider}`)
  const envFor = (url: string) => (provider === 'ollama' ? { OLLAMA_HOST: url } : { OPENAI_BASE_URL: url })
  const kind = provider === 'ollama' ? 'Ollama server' : 'OpenAI-compatible server'
  t.before.each(async (ctx) => {
    ctx.server = await startFakeModelServer()
    ctx.client = createLlmClient({ env: envFor(ctx.server.url), backoffBaseMs: 5 })
    ctx.model = `${provider}:tiny`
  })
  t.after.each(async (ctx) => {
    await ctx.server.close()
  })

  t('retries an HTTP 500, then succeeds with attempts 2', async ({ server, client, model }) => {
    server.script({ status: 500 }, { content: 'ok' })
    const r = await client.call({ model, messages })
    assert.is(r.content, 'ok')
    assert.is(r.attempts, 2)
    assert.is(server.chatRequests().length, 2)
  })

  t('retries a 429 (Retry-After: 0) and a connection reset, then succeeds with attempts 3', async ({ server, client, model }) => {
    server.script({ status: 429, headers: { 'Retry-After': '0' } }, { reset: true }, { content: 'third time' })
    const r = await client.call({ model, messages })
    assert.is(r.content, 'third time')
    assert.is(r.attempts, 3)
  })

  t(
    'a stream cut after its first token is LLM_STREAM_CUT with the bytes and tokens received, and is not retried (D17)',
    async ({ server, client, model }) => {
      server.script({ content: 'one two three four', resetAfterTokens: 1 }, { content: 'five six' })
      const seen: string[] = []
      const e = await teaRejection(client.call({ model, messages, onToken: (tk) => seen.push(tk) }))
      assert.is(e.code, 'LLM_STREAM_CUT', e.message)
      const bytes = server.sent()[0]!.bytes
      assert.is(
        e.message,
        `the ${kind} at ${server.url} closed the reply after ${bytes} bytes (1 token): connection reset (not retried: 1 token had already been streamed)`,
      )
      assert.equal([e.details?.['bytes'], e.details?.['tokens'], e.details?.['attempts']], [bytes, 1, 1])
      assert.match(e.hint ?? '', 'on_error')
      assert.equal(seen, ['one'])
      assert.is(server.pending(), 1, 'the second reply was never asked for')
    },
  )

  t('a stream cut before any token was passed on is retried: nothing of it reached the caller', async ({ server, client, model }) => {
    server.script({ content: 'one two three four', cutAfterBytes: 10 }, { content: 'five six' })
    const seen: string[] = []
    const r = await client.call({ model, messages, onToken: (tk) => seen.push(tk) })
    assert.equal([r.content, r.attempts], ['five six', 2])
    assert.equal(seen, ['five', ' six'])
  })

  t('a reply that is not streamed, cut mid-body, is LLM_STREAM_CUT naming the bytes, and is retried', async ({ server, client, model }) => {
    server.script(
      { content: 'one two three four', resetAfterTokens: 1 },
      { content: 'whole' },
      { content: 'one two three four', resetAfterTokens: 1 },
    )
    const r = await client.call({ model, messages })
    assert.equal([r.content, r.attempts], ['whole', 2])
    const e = await teaRejection(client.call({ model, messages, max_retries: 0 }))
    assert.is(e.code, 'LLM_STREAM_CUT', e.message)
    const bytes = server.sent()[2]!.bytes
    assert.ok(bytes > 0)
    assert.is(e.message, `the ${kind} at ${server.url} closed the reply after ${bytes} bytes: connection reset`)
    assert.is(e.details?.['bytes'], bytes)
  })

  t('a cut that keeps recurring before any token gives up after max_retries, saying so', async ({ server, client, model }) => {
    server.script({ content: 'a b', cutAfterBytes: 5, repeat: true })
    const e = await teaRejection(client.call({ model, messages, onToken: () => {}, max_retries: 1 }))
    assert.is(e.code, 'LLM_STREAM_CUT')
    assert.match(e.message, 'closed the reply after 5 bytes (0 tokens)')
    assert.match(e.message, 'gave up after 2 attempts')
  })

  t('a timeout after a token was streamed is not retried either, and says what had arrived', async ({ server, client, model }) => {
    server.script({ content: 'a b c d', tokenDelayMs: 1000 }, { content: 'unused' })
    const e = await teaRejection(client.call({ model, messages, timeout: 0.2, max_retries: 2, onToken: () => {} }))
    assert.is(e.code, 'LLM_TIMEOUT')
    assert.match(
      e.message,
      /did not finish its reply within 0\.2 s \(it sent \d+ bytes \(1 token\)\) \(not retried: 1 token had already been streamed\)$/,
    )
    assert.is(e.details?.['attempts'], 1)
    assert.is(server.pending(), 1)
  })

  t('does not retry HTTP 400: LLM_HTTP_ERROR with status, body and attempts 1', async ({ server, client, model }) => {
    server.script(
      { status: 400, body: provider === 'ollama' ? { error: 'invalid options' } : { error: { message: 'invalid options' } } },
      { content: 'unused' },
    )
    const e = await teaRejection(client.call({ model, messages }))
    assert.is(e.code, 'LLM_HTTP_ERROR')
    assert.is(e.details?.['status'], 400)
    assert.is(e.details?.['attempts'], 1)
    assert.match(e.message, 'HTTP 400: invalid options')
    assert.is(server.chatRequests().length, 1)
  })

  t('gives up after max_retries transient failures, saying how many attempts it made', async ({ server, client, model }) => {
    server.script({ status: 503 }, { status: 502 }, { status: 500 }, { content: 'too late' })
    const e = await teaRejection(client.call({ model, messages, max_retries: 2 }))
    assert.is(e.code, 'LLM_HTTP_ERROR')
    assert.is(e.details?.['status'], 500)
    assert.is(e.details?.['attempts'], 3)
    assert.match(e.message, 'gave up after 3 attempts')
    assert.is(server.pending(), 1)
  })

  t('a reply slower than the timeout is LLM_TIMEOUT naming the seconds and the URL', async ({ server, client, model }) => {
    server.script({ delayMs: 2000, content: 'slow' })
    const e = await teaRejection(client.call({ model, messages, timeout: 0.2, max_retries: 0 }))
    assert.is(e.code, 'LLM_TIMEOUT')
    assert.match(e.message, '0.2 s')
    assert.match(e.message, server.url)
    assert.is(e.details?.['attempts'], 1)
  })

  t('a timeout is transient: the next attempt can succeed', async ({ server, client, model }) => {
    server.script({ delayMs: 2000, content: 'slow' }, { content: 'fast' })
    const r = await client.call({ model, messages, timeout: 0.2, max_retries: 1 })
    assert.is(r.content, 'fast')
    assert.is(r.attempts, 2)
  })

  t('the timeout also bounds a stream that stalls between tokens', async ({ server, client, model }) => {
    server.script({ content: 'a b c d', tokenDelayMs: 1000 })
    const e = await teaRejection(client.call({ model, messages, timeout: 0.2, max_retries: 0, onToken: () => {} }))
    assert.is(e.code, 'LLM_TIMEOUT')
  })

  t('no server listening is LLM_UNREACHABLE naming the URL, after the retries', async ({ model }) => {
    const url = `http://127.0.0.1:${await closedPort()}`
    const client = createLlmClient({ env: envFor(url), backoffBaseMs: 1 })
    const e = await teaRejection(client.call({ model, messages, max_retries: 1 }))
    assert.is(e.code, 'LLM_UNREACHABLE')
    assert.match(e.message, `at ${url}: connection refused`)
    assert.is(e.details?.['attempts'], 2)
    assert.not.match(e.message, '\n')
  })

  t('a garbage body is LLM_BAD_RESPONSE and is not retried', async ({ server, client, model }) => {
    server.script({ garbage: '<html>502 proxy</html>' }, { content: 'unused' })
    const e = await teaRejection(client.call({ model, messages }))
    assert.is(e.code, 'LLM_BAD_RESPONSE')
    assert.match(e.message, '<html>502 proxy</html>')
    assert.is(server.chatRequests().length, 1)
  })

  t('a truncated JSON body is LLM_BAD_RESPONSE', async ({ server, client, model }) => {
    server.script({ truncated: true, content: 'cut short here' })
    const e = await teaRejection(client.call({ model, messages }))
    assert.is(e.code, 'LLM_BAD_RESPONSE')
  })

  t(
    'a stream that ends cleanly before its final message is LLM_STREAM_CUT, not retried after its tokens',
    async ({ server, client, model }) => {
      server.script({ truncated: true, content: 'one two three four' }, { content: 'unused' })
      const e = await teaRejection(client.call({ model, messages, onToken: () => {} }))
      assert.is(e.code, 'LLM_STREAM_CUT', e.message)
      assert.match(e.message, `closed the reply after ${server.sent()[0]!.bytes} bytes (2 tokens): the stream ended`)
      assert.is(server.pending(), 1)
    },
  )

  t('an empty streamed body is LLM_BAD_RESPONSE: nothing was cut short', async ({ server, client, model }) => {
    server.script({ garbage: '' }, { content: 'unused' })
    const e = await teaRejection(client.call({ model, messages, onToken: () => {} }))
    assert.is(e.code, 'LLM_BAD_RESPONSE', e.message)
    assert.match(e.message, 'the reply body is empty')
    assert.is(server.pending(), 1)
  })

  t('a garbage line in a stream is LLM_BAD_RESPONSE', async ({ server, client, model }) => {
    const garbage = provider === 'ollama' ? 'this is not json\n' : 'data: {not json\n\n'
    server.script({ garbage })
    const e = await teaRejection(client.call({ model, messages, onToken: () => {} }))
    assert.is(e.code, 'LLM_BAD_RESPONSE')
    assert.match(e.message, 'not json')
  })

  t('cancellation mid-request is a control signal and is never retried', async ({ server, model }) => {
    const controller = new AbortController()
    const client = createLlmClient({ env: envFor(server.url), backoffBaseMs: 5 })
    server.script({ delayMs: 5000, content: 'never', repeat: true })
    const watching = setInterval(() => {
      if (server.chatRequests().length > 0) controller.abort()
    }, 5)
    try {
      await client.call({ model, messages, signal: controller.signal, max_retries: 3 })
      assert.unreachable('expected cancellation')
    } catch (e) {
      assert.ok(isControlSignal(e, 'cancel'), String(e))
    } finally {
      clearInterval(watching)
    }
    assert.is(server.chatRequests().length, 1)
  })

  t('cancellation while waiting to retry stops the retries', async ({ server, model }) => {
    const controller = new AbortController()
    const client = createLlmClient({ env: envFor(server.url), backoffBaseMs: 60_000 })
    server.script({ status: 503 }, { content: 'never reached' })
    const watching = setInterval(() => {
      if (server.chatRequests().length > 0) setTimeout(() => controller.abort(), 30)
    }, 5)
    try {
      await client.call({ model, messages, signal: controller.signal })
      assert.unreachable('expected cancellation')
    } catch (e) {
      assert.ok(isControlSignal(e, 'cancel'), String(e))
    } finally {
      clearInterval(watching)
    }
    assert.is(server.chatRequests().length, 1)
  })

  t.run()
}
