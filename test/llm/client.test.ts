import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { mergeLlmSettings } from '../../src/llm/settings.ts'
import type { FakeModelServer } from '../support/fake-model-server.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'

const t = suite<{ server: FakeModelServer }>('llm client: settings')
const messages = [{ role: 'user' as const, content: 'hi' }]

t.before.each(async (ctx) => {
  ctx.server = await startFakeModelServer()
})
t.after.each(async (ctx) => {
  await ctx.server.close()
})

t('settings.llm defaults apply; per-call values win; undefined per-call values do not erase defaults', () => {
  const merged = mergeLlmSettings(
    { model: 'ollama:a', temperature: 0.7, timeout: 30, keep_alive: '5m', max_reply_bytes: 1000 },
    { model: 'ollama:b', temperature: undefined, timeout: 5, max_reply_bytes: 2000 },
  )
  assert.equal(merged, { model: 'ollama:b', temperature: 0.7, timeout: 5, max_reply_bytes: 2000, keep_alive: '5m' })
})

t('the client uses its defaults (model, format, temperature) under the call', async ({ server }) => {
  server.script({ content: '{"n": 1}' }, { content: '["two"]' })
  const client = createLlmClient({ env: { OLLAMA_HOST: server.url }, defaults: { model: 'ollama:dflt', format: 'json', temperature: 0.2 } })
  const first = await client.call({ messages })
  assert.equal(first.parsed, { n: 1 })
  assert.is(first.model, 'ollama:dflt')
  const second = await client.call({ messages, model: 'ollama:other', temperature: 0.9, format: undefined })
  assert.is(second.model, 'ollama:other')
  assert.equal(second.parsed, ['two'])
  const [a, b] = server.chatRequests()
  assert.equal([a!.body.model, a!.body.format, a!.body.options], ['dflt', 'json', { temperature: 0.2 }])
  assert.equal([b!.body.model, b!.body.format, b!.body.options], ['other', 'json', { temperature: 0.9 }])
})

t('a call without any model says where to set one', async () => {
  try {
    await createLlmClient({ env: {} }).call({ messages })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'LLM_BAD_MODEL'), String(e))
    assert.match(e.hint ?? '', 'settings.llm.model')
    assert.match(e.hint ?? '', 'with.model')
  }
})

t('a bad timeout, max_retries or max_reply_bytes is INVALID_PARAMS naming the setting', async () => {
  const client = createLlmClient({ env: {} })
  const bad = [
    [{ timeout: 0 }, 'timeout'],
    [{ timeout: -1 }, 'timeout'],
    [{ max_retries: 1.5 }, 'max_retries'],
    [{ max_retries: -1 }, 'max_retries'],
    [{ max_reply_bytes: 0 }, 'max_reply_bytes'],
    [{ max_reply_bytes: 1024.5 }, 'max_reply_bytes'],
  ] as const
  for (const [settings, key] of bad) {
    const e = await client.call({ model: 'ollama:m', messages, ...settings }).catch((err: unknown) => err)
    assert.ok(isTeaError(e, 'INVALID_PARAMS'), `${key}: ${String(e)}`)
    assert.match(e.message, key)
  }
})

t('max_retries 0 makes exactly one attempt', async ({ server }) => {
  server.script({ status: 503 }, { content: 'unused' })
  const e = await createLlmClient({ env: { OLLAMA_HOST: server.url } })
    .call({ model: 'ollama:m', messages, max_retries: 0 })
    .catch((err: unknown) => err)
  assert.ok(isTeaError(e, 'LLM_HTTP_ERROR'))
  assert.is(e.details?.['attempts'], 1)
  assert.is(server.chatRequests().length, 1)
})

t.run()
