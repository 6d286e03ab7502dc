import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { cassetteKey } from '../../src/llm/cassette.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import type { LlmRequest } from '../../src/llm/types.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { tempDir } from '../support/temp-dir.ts'

const t = suite<{ dir: string; path: string }>('cassettes: record and replay')
t.before.each((ctx) => {
  ctx.dir = tempDir('tea-cassette-')
  ctx.path = join(ctx.dir, 'run.cassette.jsonl')
})
t.after.each((ctx) => {
  rmSync(ctx.dir, { recursive: true, force: true })
})

const ask = (content: string): LlmRequest['messages'] => [{ role: 'user', content }]
const line = (request: object, content: string, extra: object = {}): string =>
  `${JSON.stringify({ request, response: { content, usage: { prompt_tokens: 1, completion_tokens: 1 } }, ...extra })}\n`

t('records real exchanges, then replays identical results with the server closed', async ({ path }) => {
  const server = await startFakeModelServer()
  server.script({ content: 'plain answer' }, { content: 'streamed answer here' }, { content: '```json\n{"ok": true}\n```' })
  const calls = (tokens: string[]): LlmRequest[] => [
    { model: 'ollama:tiny', messages: ask('first'), temperature: 0.3 },
    { model: 'ollama:tiny', messages: ask('second'), onToken: (tk) => tokens.push(tk) },
    { model: 'ollama:tiny', messages: ask('third'), format: { type: 'object' } },
  ]
  const recordedTokens: string[] = []
  const recorder = createLlmClient({ env: { OLLAMA_HOST: server.url }, record: path })
  const recorded = []
  for (const c of calls(recordedTokens)) recorded.push(await recorder.call(c))
  await recorder.close()
  await server.close()

  const replayedTokens: string[] = []
  const player = createLlmClient({ env: { OLLAMA_HOST: server.url }, replay: path })
  const replayed = []
  for (const c of calls(replayedTokens)) replayed.push(await player.call(c))
  assert.equal(replayed, recorded)
  assert.equal(replayedTokens, recordedTokens)
  assert.equal(recordedTokens, ['streamed', ' answer', ' here'])
  assert.equal(replayed[2]!.parsed, { ok: true })

  const lines = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  assert.is(lines.length, 3)
  assert.equal(lines[0], {
    request: { model: 'ollama:tiny', messages: ask('first'), temperature: 0.3 },
    response: { content: 'plain answer', usage: { prompt_tokens: 10, completion_tokens: 2 } },
  })
  assert.equal(lines[1].tokens, ['streamed', ' answer', ' here'])
  assert.equal(lines[2].request.format, { type: 'object' })
})

t('only successful attempts are recorded', async ({ path }) => {
  const server = await startFakeModelServer()
  server.script({ status: 500 }, { content: 'after a retry' })
  const r = await createLlmClient({ env: { OLLAMA_HOST: server.url }, record: path, backoffBaseMs: 1 }).call({
    model: 'ollama:tiny',
    messages: ask('x'),
  })
  await server.close()
  assert.is(r.attempts, 2)
  const lines = readFileSync(path, 'utf8').trim().split('\n')
  assert.is(lines.length, 1)
  assert.match(lines[0]!, 'after a retry')
})

t('an existing cassette is replaced only once the first exchange is recorded', async ({ path }) => {
  writeFileSync(path, line({ model: 'ollama:old', messages: ask('old') }, 'old answer'))
  const server = await startFakeModelServer()
  server.script({ content: 'new answer' })
  const recorder = createLlmClient({ env: { OLLAMA_HOST: server.url }, record: path })
  assert.match(readFileSync(path, 'utf8'), 'old answer')
  await recorder.call({ model: 'ollama:tiny', messages: ask('new') })
  await server.close()
  const text = readFileSync(path, 'utf8')
  assert.not.match(text, 'old answer')
  assert.is(text.trim().split('\n').length, 1)
  assert.match(text, 'new answer')
})

t('CASSETTE_MISS names the model, the last user message (first 200 chars) and the cassette', async ({ path }) => {
  writeFileSync(path, line({ model: 'ollama:tiny', messages: ask('recorded prompt') }, 'x'))
  const long = `Plan the maintenance of pump 3. ${'x'.repeat(300)}`
  try {
    await createLlmClient({ env: {}, replay: path }).call({
      model: 'ollama:tiny',
      messages: [{ role: 'system', content: 'sys' }, ...ask(long), { role: 'assistant', content: 'ok' }],
    })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'CASSETTE_MISS'), String(e))
    assert.match(e.message, path)
    assert.match(e.message, 'model tiny')
    assert.match(e.message, `"${long.slice(0, 200)}…"`)
    assert.not.match(e.message, long.slice(0, 201))
    assert.match(e.message, '1 exchange for this model')
    assert.match(e.hint ?? '', `--record ${path}`)
  }
})

t('identical requests take their entries in file order, then reuse the last', async ({ path }) => {
  const req = { model: 'ollama:tiny', messages: ask('roll a die') }
  writeFileSync(path, line(req, 'four') + line({ model: 'ollama:tiny', messages: ask('other') }, 'other') + line(req, 'two'))
  const client = createLlmClient({ env: {}, replay: path })
  const answers = []
  for (let i = 0; i < 4; i++) answers.push((await client.call(req)).content)
  assert.equal(answers, ['four', 'two', 'two', 'two'])
})

t('matching ignores temperature and the provider prefix, but not the format or the messages', async ({ path }) => {
  writeFileSync(
    path,
    line({ model: 'ollama:tiny', messages: ask('q'), temperature: 0.9 }, 'plain') +
      line({ model: 'ollama:tiny', messages: ask('q'), format: 'json' }, '{"a":1}'),
  )
  const client = createLlmClient({ env: {}, replay: path })
  assert.is((await client.call({ model: 'openai:tiny', messages: ask('q'), temperature: 0 })).content, 'plain')
  assert.is((await client.call({ model: 'replay:tiny', messages: ask('q'), format: 'json' })).content, '{"a":1}')
  const miss = await client.call({ model: 'ollama:tiny', messages: ask('q'), format: { type: 'object' } }).catch((e: unknown) => e)
  assert.ok(isTeaError(miss, 'CASSETTE_MISS'))
  const other = await client.call({ model: 'ollama:bigger', messages: ask('q') }).catch((e: unknown) => e)
  assert.ok(isTeaError(other, 'CASSETTE_MISS'))
  assert.is(cassetteKey('ollama:m', ask('q'), { b: 1, a: 2 }), cassetteKey('m', ask('q'), { a: 2, b: 1 }))
})

t('replay without recorded tokens streams the whole content as one token', async ({ path }) => {
  writeFileSync(path, line({ model: 'ollama:tiny', messages: ask('q') }, 'whole reply'))
  const seen: string[] = []
  await createLlmClient({ env: {}, replay: path }).call({ model: 'ollama:tiny', messages: ask('q'), onToken: (tk) => seen.push(tk) })
  assert.equal(seen, ['whole reply'])
})

t('replay holds a recorded reply to max_reply_bytes (default 4 MiB), naming its cassette line', async ({ path }) => {
  const big = 'x'.repeat(4 * 1024 * 1024 + 1)
  writeFileSync(
    path,
    line({ model: 'ollama:tiny', messages: ask('short') }, 'short') + line({ model: 'ollama:tiny', messages: ask('long') }, big),
  )
  const client = createLlmClient({ env: {}, replay: path })
  assert.is((await client.call({ model: 'ollama:tiny', messages: ask('short') })).content, 'short')
  const e = await client.call({ model: 'ollama:tiny', messages: ask('long') }).catch((err: unknown) => err)
  assert.ok(isTeaError(e, 'LLM_REPLY_TOO_LARGE'), String(e))
  assert.is(e.message, `the recorded reply at ${path}:2 is larger than max_reply_bytes (4 MiB): it holds ${big.length} bytes of text`)
  assert.equal([e.details?.['path'], e.details?.['line'], e.details?.['bytes']], [path, 2, big.length])
  assert.is((await client.call({ model: 'ollama:tiny', messages: ask('long'), max_reply_bytes: big.length })).content.length, big.length)
})

t('a line that is not valid JSON is CASSETTE_INVALID with path:line', ({ path }) => {
  writeFileSync(path, `${line({ model: 'ollama:tiny', messages: ask('q') }, 'a')}\n{"request": oops}\n`)
  try {
    createLlmClient({ env: {}, replay: path })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'CASSETTE_INVALID'), String(e))
    assert.match(e.message, `${path}:3:`)
    assert.match(e.message, 'not valid JSON')
  }
})

t('a line of the wrong shape is CASSETTE_INVALID saying what was expected', ({ path }) => {
  writeFileSync(
    path,
    `${JSON.stringify({ request: { model: 'ollama:tiny', messages: [{ role: 'user' }] }, response: { content: 'a' } })}\n`,
  )
  try {
    createLlmClient({ env: {}, replay: path })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'CASSETTE_INVALID'))
    assert.match(e.message, `${path}:1: invalid cassette line: expected request.messages`)
  }
})

t('a missing cassette file is CASSETTE_INVALID naming it', ({ dir }) => {
  const missing = join(dir, 'nope.jsonl')
  const e = (() => {
    try {
      createLlmClient({ env: {}, replay: missing })
    } catch (err) {
      return err
    }
  })()
  assert.ok(isTeaError(e, 'CASSETTE_INVALID'))
  assert.match(e.message, missing)
  assert.is(existsSync(missing), false)
})

t('--record and --replay together are a usage error; replay: models need a cassette', async ({ path }) => {
  assert.throws(
    () => createLlmClient({ env: {}, record: path, replay: path }),
    (e: unknown) => isTeaError(e, 'USAGE'),
  )
  const e = await createLlmClient({ env: {} })
    .call({ model: 'replay:tiny', messages: ask('q') })
    .catch((err: unknown) => err)
  assert.ok(isTeaError(e, 'LLM_BAD_MODEL'))
  assert.match(e.hint ?? '', '--replay')
})

t.run()
