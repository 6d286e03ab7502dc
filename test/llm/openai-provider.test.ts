import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { chatCompletionsUrl, resolveOpenAiUrl } from '../../src/llm/base-url.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import type { FakeModelServer } from '../support/fake-model-server.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'

const t = suite<{ server: FakeModelServer }>('openai-compatible provider')
const messages = [{ role: 'user' as const, content: 'Weather?' }]
const schema = { type: 'object', properties: { sky: { type: 'string' } }, required: ['sky'], additionalProperties: false }

t.before.each(async (ctx) => {
  ctx.server = await startFakeModelServer()
})
t.after.each(async (ctx) => {
  await ctx.server.close()
})

t('sends a JSON Schema as response_format json_schema (strict), and temperature', async ({ server }) => {
  server.script({ content: '{"sky":"blue"}' })
  const client = createLlmClient({ env: { OPENAI_BASE_URL: server.url } })
  const r = await client.call({ model: 'openai:llama-3.2-1b', messages, format: schema, temperature: 0 })
  assert.equal(r.parsed, { sky: 'blue' })
  const [req] = server.chatRequests()
  assert.is(req!.path, '/v1/chat/completions')
  assert.equal(req!.body, {
    model: 'llama-3.2-1b',
    messages,
    stream: false,
    temperature: 0,
    response_format: { type: 'json_schema', json_schema: { name: 'reply', schema, strict: true } },
  })
})

t("sends response_format json_object for format 'json', and none without a format", async ({ server }) => {
  server.script({ content: '{}' }, { content: 'plain' })
  const client = createLlmClient({ env: { OPENAI_BASE_URL: server.url } })
  await client.call({ model: 'openai:m', messages, format: 'json' })
  const plain = await client.call({ model: 'openai:m', messages })
  assert.equal(server.chatRequests()[0]!.body.response_format, { type: 'json_object' })
  assert.is(server.chatRequests()[1]!.body.response_format, undefined)
  assert.is('parsed' in plain, false)
})

t('sends OPENAI_API_KEY as a Bearer token, and no Authorization header without one', async ({ server }) => {
  server.script({ content: 'a' }, { content: 'b' })
  await createLlmClient({ env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'sk-test' } }).call({ model: 'openai:m', messages })
  await createLlmClient({ env: { OPENAI_BASE_URL: server.url } }).call({ model: 'openai:m', messages })
  assert.is(server.chatRequests()[0]!.headers['authorization'], 'Bearer sk-test')
  assert.is(server.chatRequests()[1]!.headers['authorization'], undefined)
})

t('streams over SSE asking for a usage chunk, and reports that usage', async ({ server }) => {
  server.script({ content: 'x y z', usage: { prompt_tokens: 4, completion_tokens: 3 } })
  const seen: string[] = []
  const r = await createLlmClient({ env: { OPENAI_BASE_URL: server.url } }).call({
    model: 'openai:m',
    messages,
    onToken: (tk) => seen.push(tk),
  })
  assert.equal(server.chatRequests()[0]!.body.stream_options, { include_usage: true })
  assert.equal(seen, ['x', ' y', ' z'])
  assert.equal(r.usage, { prompt_tokens: 4, completion_tokens: 3 })
})

t('accepts a base URL that already ends in /v1 (as the OpenAI SDKs expect)', async ({ server }) => {
  server.script({ content: 'ok' })
  const r = await createLlmClient({ env: { OPENAI_BASE_URL: `${server.url}/v1/` } }).call({ model: 'openai:m', messages })
  assert.is(r.content, 'ok')
  assert.is(chatCompletionsUrl('http://h:8080/v1'), 'http://h:8080/v1/chat/completions')
  assert.is(chatCompletionsUrl('http://h:8080'), 'http://h:8080/v1/chat/completions')
})

t('reports the server error message from an OpenAI-style error body', async ({ server }) => {
  server.script({ status: 422, body: { error: { message: "response_format type 'json_schema' is not supported" } } })
  try {
    await createLlmClient({ env: { OPENAI_BASE_URL: server.url } }).call({ model: 'openai:m', messages, format: schema })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'LLM_HTTP_ERROR'))
    assert.match(e.message, "HTTP 422: response_format type 'json_schema' is not supported")
  }
})

t('without OPENAI_BASE_URL or base_url it fails saying how to configure the server', async () => {
  try {
    await createLlmClient({ env: {} }).call({ model: 'openai:m', messages })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'LLM_BAD_MODEL'), String(e))
    assert.match(e.message, 'openai:m')
    assert.match(e.hint ?? '', 'OPENAI_BASE_URL')
    assert.match(e.hint ?? '', 'settings.llm.base_url')
  }
  assert.is(resolveOpenAiUrl(undefined, { OPENAI_BASE_URL: '  ' }), undefined)
  assert.is(resolveOpenAiUrl('10.0.0.5:8080', {}), 'http://10.0.0.5:8080')
})

t.run()
