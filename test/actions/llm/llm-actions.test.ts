import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../../src/core/errors.ts'
import { llmActions } from '../../../src/actions/llm/index.ts'
import { jsonSchemaOf } from '../../../src/actions/json-schema.ts'
import { paramIssues, validateParams } from '../../../src/actions/registry.ts'
import { toLlmRequest } from '../../../src/actions/llm/params.ts'
import type { Action } from '../../../src/actions/types.ts'
import { createLlmClient } from '../../../src/llm/client.ts'
import type { FakeModelServer } from '../../support/fake-model-server.ts'
import { startFakeModelServer } from '../../support/fake-model-server.ts'
import type { TestContext } from '../context.ts'
import { testContext } from '../context.ts'

const byName = (name: string): Action => llmActions.find((a) => a.name === name)!
const llmCall = byName('llm.call')
const llmStream = byName('llm.stream')

const t = suite<{ server: FakeModelServer; ctx: TestContext }>('llm.call and llm.stream')
t.before.each(async (c) => {
  c.server = await startFakeModelServer()
  c.ctx = testContext({
    node: 'ask',
    llm: createLlmClient({ env: { OLLAMA_HOST: c.server.url }, backoffBaseMs: 1 }),
    settings: { llm: { model: 'ollama:tiny', temperature: 0.4 } },
  })
})
t.after.each(async (c) => {
  c.ctx.cleanup()
  await c.server.close()
})

async function run(action: Action, params: unknown, ctx: TestContext) {
  return action.run(validateParams(action, params, { node: 'ask' }), ctx)
}

t('llm.call sends system + prompt with settings.llm defaults and returns {content, model, usage, attempts}', async ({ server, ctx }) => {
  server.script({ content: 'Pump 3 needs a new seal.', usage: { prompt_tokens: 12, completion_tokens: 6 } })
  const update = await run(llmCall, { system: 'You are a plant-room assistant.', prompt: 'What needs fixing?' }, ctx)
  assert.equal(update, {
    content: 'Pump 3 needs a new seal.',
    model: 'ollama:tiny',
    usage: { prompt_tokens: 12, completion_tokens: 6 },
    attempts: 1,
  })
  const body = server.chatRequests()[0]!.body
  assert.equal(body.messages, [
    { role: 'system', content: 'You are a plant-room assistant.' },
    { role: 'user', content: 'What needs fixing?' },
  ])
  assert.equal(body.options, { temperature: 0.4 })
  assert.is(body.model, 'tiny')
})

t('with.* values win over settings.llm (model, temperature, keep_alive)', async ({ server, ctx }) => {
  server.script({ content: 'ok' })
  const update = await run(llmCall, { prompt: 'hi', model: 'ollama:bigger:7b', temperature: 0, keep_alive: '10m' }, ctx)
  assert.is(update['model'], 'ollama:bigger:7b')
  const body = server.chatRequests()[0]!.body
  assert.equal([body.model, body.options, body.keep_alive], ['bigger:7b', { temperature: 0 }, '10m'])
})

t('messages are sent as given, after `system`', async ({ server, ctx }) => {
  server.script({ content: 'ok' })
  const messages = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'b' },
    { role: 'user', content: 'c' },
  ]
  await run(llmCall, { messages, system: 's' }, ctx)
  assert.equal(server.chatRequests()[0]!.body.messages, [{ role: 'system', content: 's' }, ...messages])
})

t('format (a JSON Schema) is sent to the model and the result carries `parsed`', async ({ server, ctx }) => {
  const schema = { type: 'object', properties: { action: { type: 'string' } }, required: ['action'] }
  server.script({ content: '{"action": "replace seal"}' })
  const update = await run(llmCall, { prompt: 'Next step as JSON', format: schema }, ctx)
  assert.equal(update['parsed'], { action: 'replace seal' })
  assert.equal(server.chatRequests()[0]!.body.format, schema)
})

t('llm.stream emits llm_token events for the node, in order, and returns the whole reply', async ({ server, ctx }) => {
  server.script({ content: 'one two three' })
  const update = await run(llmStream, { prompt: 'count' }, ctx)
  assert.is(update['content'], 'one two three')
  assert.equal(ctx.events, [
    { type: 'llm_token', node: 'ask', token: 'one' },
    { type: 'llm_token', node: 'ask', token: ' two' },
    { type: 'llm_token', node: 'ask', token: ' three' },
  ])
})

t("the run's signal reaches the call: an aborted run cancels it", async ({ server, ctx }) => {
  server.script({ content: 'unused' })
  ctx.abort()
  const e = await Promise.resolve(run(llmCall, { prompt: 'hi' }, ctx)).catch((err: unknown) => err)
  assert.is((e as { name?: string }).name, 'ControlSignal')
  assert.is(server.chatRequests().length, 0)
})

t('failures surface as coded errors with the attempts made', async ({ server, ctx }) => {
  server.script({ status: 400, body: { error: 'bad request' } })
  const e = await Promise.resolve(run(llmCall, { prompt: 'hi' }, ctx)).catch((err: unknown) => err)
  assert.ok(isTeaError(e, 'LLM_HTTP_ERROR'))
  assert.is(e.details?.['attempts'], 1)
})

t(
  'llm.stream fails with LLM_REPLY_TOO_LARGE past settings.llm.max_reply_bytes, and with.max_reply_bytes overrides it (D16)',
  async ({ server }) => {
    const ctx = testContext({
      node: 'ask',
      llm: createLlmClient({ env: { OLLAMA_HOST: server.url }, backoffBaseMs: 1 }),
      settings: { llm: { model: 'ollama:tiny', max_reply_bytes: 10 } },
    })
    try {
      server.script({ content: 'eleven byte' }, { content: 'eleven byte' })
      const e = await Promise.resolve(run(llmStream, { prompt: 'talk' }, ctx)).catch((err: unknown) => err)
      assert.ok(isTeaError(e, 'LLM_REPLY_TOO_LARGE'), String(e))
      assert.is(e.details?.['max_reply_bytes'], 10)
      assert.equal(
        ctx.events.map((ev) => (ev as { token?: string }).token),
        ['eleven'],
        'the token under the cap reached the stream',
      )
      const update = await run(llmStream, { prompt: 'talk', max_reply_bytes: 11 }, ctx)
      assert.is(update['content'], 'eleven byte')
    } finally {
      ctx.cleanup()
    }
  },
)

t('params: prompt or messages (with both, messages wins, as in TEA); every other issue is listed with its path', () => {
  for (const action of [llmCall, llmStream]) {
    assert.equal(paramIssues(action, { prompt: 'a' }), [])
    assert.equal(paramIssues(action, { messages: [{ role: 'user', content: 'a' }] }), [])
    assert.equal(
      paramIssues(action, {}).map((i) => i.message),
      ['give `prompt` or `messages`'],
    )
    assert.equal(paramIssues(action, { prompt: 'a', messages: [{ role: 'user', content: 'b' }] }), [])
    assert.equal(toLlmRequest({ prompt: 'a', messages: [{ role: 'user', content: 'b' }] }).messages, [{ role: 'user', content: 'b' }])
    assert.equal(toLlmRequest({ prompt: 'a', extra_body: { reasoning_effort: 'none' }, options: { top_k: 2 } }).options, {
      reasoning_effort: 'none',
      top_k: 2,
    })
    const issues = paramIssues(action, {
      prompt: 'a',
      format: 'xml',
      timeout: 0,
      max_retries: 1.5,
      max_reply_bytes: 0,
      messages: [{ role: 'robot', content: 1 }],
    })
    const paths = issues.map((i) => i.path?.join('.'))
    for (const p of ['format', 'timeout', 'max_retries', 'max_reply_bytes', 'messages.0.role', 'messages.0.content'])
      assert.ok(paths.includes(p), `${p} in ${paths}`)
  }
})

t('the params convert to a JSON Schema listing every parameter', () => {
  const schema = jsonSchemaOf(llmCall.params) as { properties: Record<string, unknown> }
  assert.equal(Object.keys(schema.properties).sort(), [
    'api_base',
    'base_url',
    'extra_body',
    'format',
    'keep_alive',
    'max_reply_bytes',
    'max_retries',
    'max_tokens',
    'messages',
    'model',
    'model_path',
    'options',
    'prompt',
    'provider',
    'response_format',
    'seed',
    'shell_provider',
    'stop',
    'system',
    'temperature',
    'timeout',
  ])
})

t.run()
