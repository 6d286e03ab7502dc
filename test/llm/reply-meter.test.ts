/**
 * `max_reply_bytes` (D16) for both network providers, streamed and not, through the fake model server and the
 * real clients. The server sends its 10 MB replies in pieces with a pause between them and counts what it wrote
 * before the connection closed, so "tea stopped reading" is seen from the server's side: a client that buffered
 * the whole reply before checking its size, or that stopped reading but kept the connection open, would let it
 * write all 10 MB.
 */

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { TeaError } from '../../src/core/errors.ts'
import { isTeaError } from '../../src/core/errors.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import type { LlmClient } from '../../src/llm/types.ts'
import type { FakeModelServer, SentReply } from '../support/fake-model-server.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { teaRejection } from '../support/expect.ts'

const messages = [{ role: 'user' as const, content: 'Write a lot.' }]
const MiB = 1024 * 1024
const TEN_MB = 10_000_000
const paced = { chunkBytes: 64 * 1024, chunkDelayMs: 1 }

/** The server's record of reply `i` once its response is over (or as it stands after 5 s). */
async function settled(server: FakeModelServer, i: number): Promise<SentReply> {
  for (let waited = 0; waited < 5000 && !server.sent()[i]?.closed; waited += 10) await new Promise((r) => setTimeout(r, 10))
  return server.sent()[i]!
}

for (const provider of ['ollama', 'openai'] as const) {
  const t = suite<{ server: FakeModelServer; client: LlmClient; model: string }>(`llm reply size cap: ${provider}`)
  t.before.each(async (ctx) => {
    ctx.server = await startFakeModelServer()
    ctx.client = createLlmClient({
      env: provider === 'ollama' ? { OLLAMA_HOST: ctx.server.url } : { OPENAI_BASE_URL: ctx.server.url },
      backoffBaseMs: 1,
    })
    ctx.model = `${provider}:tiny`
  })
  t.after.each(async (ctx) => {
    await ctx.server.close()
  })

  /** The call fails with the code, names the server, the cap and the setting, is not retried, and hung up early. */
  async function assertStoppedEarly(e: TeaError, server: FakeModelServer): Promise<void> {
    assert.is(e.code, 'LLM_REPLY_TOO_LARGE', e.message)
    assert.match(e.message, `at ${server.url}`)
    assert.match(e.message, 'max_reply_bytes (1 MiB)')
    assert.match(e.hint ?? '', 'settings.llm.max_reply_bytes')
    assert.match(e.hint ?? '', 'with.max_reply_bytes')
    assert.is(e.details?.['max_reply_bytes'], MiB)
    assert.is(e.details?.['attempts'], 1)
    assert.is(server.chatRequests().length, 1, 'not retried')
    const sent = await settled(server, 0)
    assert.equal([sent.closed, sent.complete], [true, false], 'the connection closed before the reply was written')
    assert.ok(sent.bytes < TEN_MB / 2, `the server wrote ${sent.bytes} bytes of a ${TEN_MB}-byte reply`)
  }

  t('a 10 MB reply that is not streamed fails past a 1 MiB cap, without reading the rest', async ({ server, client, model }) => {
    server.script({ content: 'x'.repeat(TEN_MB), ...paced }, { content: 'unused' })
    const e = await teaRejection(client.call({ model, messages, max_reply_bytes: MiB }))
    await assertStoppedEarly(e, server)
    const read = e.details?.['bytes'] as number
    assert.ok(read > MiB && read <= 2 * MiB + 64 * 1024 + paced.chunkBytes, `read ${read} bytes`)
  })

  t(
    'a streamed 10 MB reply passes on the tokens under a 1 MiB cap, then fails without reading the rest',
    async ({ server, client, model }) => {
      const token = 'y'.repeat(64 * 1024)
      server.script(
        { content: token.repeat(160), tokens: Array.from({ length: 160 }, () => token), tokenDelayMs: 1 },
        { content: 'unused' },
      )
      const seen: string[] = []
      const e = await teaRejection(client.call({ model, messages, max_reply_bytes: MiB, onToken: (tk) => seen.push(tk) }))
      await assertStoppedEarly(e, server)
      assert.is(seen.length, 16, '16 tokens of 64 KiB make exactly 1 MiB; the 17th would pass the cap')
    },
  )

  t('a streamed reply that never ends its line fails at the line bound, without reading the rest', async ({ server, client, model }) => {
    server.script({ content: 'z'.repeat(TEN_MB), tokens: ['z'.repeat(TEN_MB)], ...paced })
    const seen: string[] = []
    const e = await teaRejection(client.call({ model, messages, max_reply_bytes: MiB, onToken: (tk) => seen.push(tk) }))
    await assertStoppedEarly(e, server)
    assert.equal(seen, [])
  })

  t('the cap is on the reply text: a JSON-escaped reply at the cap passes, streamed or not', async ({ server, client, model }) => {
    // Every character of it takes 2 bytes on the wire (`\"` and `\n`), so the body is twice the cap.
    const text = '"\n'.repeat(512)
    server.script({ content: text }, { content: text, tokens: ['"\n'.repeat(256), '"\n'.repeat(256)] })
    assert.is((await client.call({ model, messages, max_reply_bytes: 1024 })).content, text)
    const streamed = await client.call({ model, messages, max_reply_bytes: 1024, onToken: () => {} })
    assert.is(streamed.content, text)
  })

  t('settings.llm.max_reply_bytes is the default, and a per-call value wins', async ({ server, model }) => {
    const env = provider === 'ollama' ? { OLLAMA_HOST: server.url } : { OPENAI_BASE_URL: server.url }
    const client = createLlmClient({ env, defaults: { max_reply_bytes: 8 } })
    server.script({ content: 'nine byte' }, { content: 'nine byte' })
    const e = await teaRejection(client.call({ model, messages }))
    assert.is(e.code, 'LLM_REPLY_TOO_LARGE')
    assert.is(e.details?.['max_reply_bytes'], 8)
    assert.is((await client.call({ model, messages, max_reply_bytes: 9 })).content, 'nine byte')
  })

  t.run()
}
