import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { DEFAULT_OLLAMA_URL, resolveOllamaUrl } from '../../src/llm/base-url.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import type { FakeModelServer } from '../support/fake-model-server.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'

const t = suite<{ server: FakeModelServer }>('ollama provider')
const messages = [
  { role: 'system' as const, content: 'You answer in JSON.' },
  { role: 'user' as const, content: 'Weather?' },
]
const schema = { type: 'object', properties: { sky: { type: 'string' } }, required: ['sky'] }

t.before.each(async (ctx) => {
  ctx.server = await startFakeModelServer()
})
t.after.each(async (ctx) => {
  await ctx.server.close()
})

t('sends model, messages, the JSON Schema as `format`, keep_alive and temperature in options', async ({ server }) => {
  server.script({ content: '{"sky":"grey"}' })
  const client = createLlmClient({ env: { OLLAMA_HOST: server.url } })
  const r = await client.call({ model: 'ollama:qwen2.5:1.5b', messages, format: schema, keep_alive: '5m', temperature: 0.1 })
  assert.equal(r.parsed, { sky: 'grey' })
  const [req] = server.chatRequests()
  assert.is(req!.path, '/api/chat')
  assert.equal(req!.body, {
    model: 'qwen2.5:1.5b',
    messages,
    format: schema,
    keep_alive: '5m',
    options: { temperature: 0.1 },
    stream: false,
  })
})

t('streams when a token callback is given', async ({ server }) => {
  server.script({ content: 'a b' })
  const client = createLlmClient({ env: { OLLAMA_HOST: server.url } })
  await client.call({ model: 'ollama:tiny', messages, onToken: () => {} })
  assert.is(server.chatRequests()[0]!.body.stream, true)
})

t("reports Ollama's own error text for an HTTP error (e.g. an unknown model)", async ({ server }) => {
  server.script({ status: 404, body: { error: "model 'nope' not found, try pulling it first" } })
  const client = createLlmClient({ env: { OLLAMA_HOST: server.url } })
  try {
    await client.call({ model: 'ollama:nope', messages })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'LLM_HTTP_ERROR'))
    assert.is(e.message, `the Ollama server at ${server.url} answered HTTP 404: model 'nope' not found, try pulling it first`)
  }
})

t('an error line in the middle of a stream is LLM_BAD_RESPONSE carrying the error', async ({ server }) => {
  server.script({
    garbage: '{"model":"tiny","message":{"role":"assistant","content":"Hi"},"done":false}\n{"error":"model runner crashed"}\n',
  })
  const client = createLlmClient({ env: { OLLAMA_HOST: server.url } })
  const seen: string[] = []
  try {
    await client.call({ model: 'ollama:tiny', messages, onToken: (tk) => seen.push(tk) })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'LLM_BAD_RESPONSE'), String(e))
    assert.match(e.message, 'model runner crashed')
  }
  assert.equal(seen, ['Hi'])
})

t('prints nothing on stdout when the server fails with a non-JSON body', async ({ server }) => {
  // The ollama library logs from its own error path; tea must keep stdout for the final state.
  server.script({ status: 400, body: 'plain text failure' })
  const client = createLlmClient({ env: { OLLAMA_HOST: server.url } })
  const logged: unknown[] = []
  const original = console.log
  console.log = (...args: unknown[]) => void logged.push(args)
  try {
    await client.call({ model: 'ollama:tiny', messages }).catch((e: unknown) => e)
  } finally {
    console.log = original
  }
  assert.equal(logged, [])
})

t('base_url wins over OLLAMA_HOST', async ({ server }) => {
  server.script({ content: 'from base_url' })
  const client = createLlmClient({ env: { OLLAMA_HOST: 'http://127.0.0.1:1' } })
  const r = await client.call({ model: 'ollama:tiny', messages, base_url: server.url })
  assert.is(r.content, 'from base_url')
})

t('OLLAMA_HOST may omit the scheme', async ({ server }) => {
  server.script({ content: 'ok' })
  const client = createLlmClient({ env: { OLLAMA_HOST: `127.0.0.1:${server.port}` } })
  assert.is((await client.call({ model: 'ollama:tiny', messages })).content, 'ok')
})

t('resolves the server URL: base_url, else OLLAMA_HOST (Ollama conventions), else the default', () => {
  assert.is(resolveOllamaUrl(undefined, {}), DEFAULT_OLLAMA_URL)
  assert.is(resolveOllamaUrl(undefined, { OLLAMA_HOST: '' }), 'http://127.0.0.1:11434')
  assert.is(resolveOllamaUrl(undefined, { OLLAMA_HOST: 'pi.local' }), 'http://pi.local:11434')
  assert.is(resolveOllamaUrl(undefined, { OLLAMA_HOST: ':9999' }), 'http://127.0.0.1:9999')
  assert.is(resolveOllamaUrl(undefined, { OLLAMA_HOST: 'https://gpu.lan/' }), 'https://gpu.lan')
  assert.is(resolveOllamaUrl('http://10.0.0.2:11434/', { OLLAMA_HOST: 'x' }), 'http://10.0.0.2:11434')
})

t.run()
