/**
 * The model-provider contract (STYLE 10): every provider — ollama and openai through the fake model server and
 * their real clients, replay through a cassette — must behave the same for these cases.
 */

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import type { ChatMessage } from '../../src/llm/types.ts'
import type { Harness, HarnessFactory } from './provider-harness.ts'
import { ollamaHarness, openAiHarness, replayHarness } from './provider-harness.ts'

const user = (content: string): ChatMessage[] => [{ role: 'user', content }]
const usage = { prompt_tokens: 7, completion_tokens: 3 }
const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'number' } },
  required: ['city', 'population'],
  additionalProperties: false,
}

function contract(factory: HarnessFactory, label: string): void {
  const t = suite<{ h: Harness }>(`llm provider contract: ${label}`, {} as { h: Harness })
  t.before.each(async (ctx) => {
    ctx.h = await factory()
  })
  t.after.each(async (ctx) => {
    await ctx.h.close()
  })

  t('returns the reply content, the model string, usage and attempts 1', async ({ h }) => {
    h.arrange({ messages: user('Say hello') }, { content: 'Hello there!', usage })
    const r = await h.client().call({ model: h.model, messages: user('Say hello') })
    assert.equal(r, { content: 'Hello there!', model: h.model, usage, attempts: 1 })
  })

  t('streams tokens to onToken in order and returns their concatenation', async ({ h }) => {
    const tokens = ['The', ' sky', ' is', ' blue', '.']
    h.arrange({ messages: user('Colour of the sky?') }, { content: tokens.join(''), tokens, usage })
    const seen: string[] = []
    const r = await h.client().call({ model: h.model, messages: user('Colour of the sky?'), onToken: (tk) => seen.push(tk) })
    assert.equal(seen, tokens)
    assert.is(r.content, 'The sky is blue.')
    assert.equal(r.usage, usage)
  })

  t('returns `parsed` for a JSON Schema format', async ({ h }) => {
    const messages = user('Largest city in Kenya as JSON')
    h.arrange({ messages, format: schema }, { content: '{"city":"Nairobi","population":4397073}', usage })
    const r = await h.client().call({ model: h.model, messages, format: schema })
    assert.equal(r.parsed, { city: 'Nairobi', population: 4397073 })
    assert.is(r.content, '{"city":"Nairobi","population":4397073}')
  })

  t('parses tolerantly: a fenced reply with prose under format json still gives `parsed`', async ({ h }) => {
    const messages = user('List two colours')
    h.arrange({ messages, format: 'json' }, { content: 'Sure!\n```json\n{"colours": ["red", "green"]}\n```\nDone.', usage })
    const r = await h.client().call({ model: h.model, messages, format: 'json' })
    assert.equal(r.parsed, { colours: ['red', 'green'] })
  })

  t('a reply holding no JSON under a schema format is LLM_BAD_RESPONSE quoting the raw reply', async ({ h }) => {
    const messages = user('Give me JSON')
    h.arrange({ messages, format: schema }, { content: 'I am sorry, I cannot do that.', usage })
    try {
      await h.client().call({ model: h.model, messages, format: schema })
      assert.unreachable('expected LLM_BAD_RESPONSE')
    } catch (e) {
      assert.ok(isTeaError(e, 'LLM_BAD_RESPONSE'), String(e))
      assert.match(e.message, 'I am sorry, I cannot do that.')
      assert.is(e.details?.['attempts'], 1)
    }
  })

  t('answers consecutive calls with their own replies, keeping whole conversations', async ({ h }) => {
    const first = user('One?')
    const second: ChatMessage[] = [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'One?' },
      { role: 'assistant', content: '1' },
      { role: 'user', content: 'Two?' },
    ]
    h.arrange({ messages: first }, { content: '1', usage })
    h.arrange({ messages: second }, { content: '2', usage })
    const client = h.client()
    assert.is((await client.call({ model: h.model, messages: first })).content, '1')
    assert.is((await client.call({ model: h.model, messages: second })).content, '2')
  })

  t('max_reply_bytes caps the UTF-8 bytes of the reply text, streamed or not: at the cap passes, past it fails', async ({ h }) => {
    const tokens = ['Grüß', ' dich', '!'] // 10 characters, 12 bytes
    const atCap = tokens.join('')
    const ask = (label: string) => user(`Greet me (${label})`)
    h.arrange({ messages: ask('at') }, { content: atCap, usage })
    h.arrange({ messages: ask('at, streamed') }, { content: atCap, tokens, usage })
    h.arrange({ messages: ask('over') }, { content: `${atCap}?`, usage })
    h.arrange({ messages: ask('over, streamed') }, { content: `${atCap}?`, tokens: [...tokens, '?'], usage })
    const client = h.client()
    const call = (label: string, onToken?: (t: string) => void) =>
      client.call({ model: h.model, messages: ask(label), max_reply_bytes: 12, ...(onToken ? { onToken } : {}) })
    assert.is((await call('at')).content, atCap)
    assert.is((await call('at, streamed', () => {})).content, atCap)
    const over = await call('over').catch((e: unknown) => e)
    assert.ok(isTeaError(over, 'LLM_REPLY_TOO_LARGE'), String(over))
    assert.equal([over.details?.['max_reply_bytes'], over.details?.['attempts']], [12, 1])
    assert.match(over.hint ?? '', 'max_reply_bytes')
    const seen: string[] = []
    const overStreamed = await call('over, streamed', (tk) => seen.push(tk)).catch((e: unknown) => e)
    assert.ok(isTeaError(overStreamed, 'LLM_REPLY_TOO_LARGE'), String(overStreamed))
    assert.equal(seen, tokens, 'the tokens under the cap are passed on; the one that passes it is not')
    assert.ok(h.sent() === undefined || h.sent() === 4, `requests sent: ${h.sent()} (a reply over the cap is not retried)`)
  })

  t('an already-aborted signal cancels with a control signal and no request', async ({ h }) => {
    h.arrange({ messages: user('never') }, { content: 'never', usage })
    const controller = new AbortController()
    controller.abort()
    try {
      await h.client().call({ model: h.model, messages: user('never'), signal: controller.signal })
      assert.unreachable('expected cancellation')
    } catch (e) {
      assert.ok(isControlSignal(e, 'cancel'), String(e))
    }
    assert.ok(h.sent() === undefined || h.sent() === 0, `requests sent: ${h.sent()}`)
  })

  t.run()
}

contract(ollamaHarness, 'ollama')
contract(openAiHarness, 'openai')
contract(replayHarness, 'replay')
