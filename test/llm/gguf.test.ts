/**
 * Issue 30 items 1, 2, 5, 6: GGUF models run in the process, through the real llama.cpp addon and the tiny
 * random-weight model (scripts/tiny-gguf.mjs). Its replies are nonsense, so what is checked is what does not depend
 * on sense: a `format:` reply parses and matches its schema (enums and booleans, which the grammar alone decides),
 * a seeded call repeats exactly, tokens stream, embeddings have the model's dimension, an abort or a timeout stops
 * the generation, keep_alive unloads the model, and bad input is a coded error.
 */
import { copyFileSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { isTeaError, type TeaError } from '../../src/core/errors.ts'
import { startRun } from '../../src/engine/lifecycle.ts'
import { buildRegistry } from '../../src/features.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { loadedGgufModels, unloadIdleGgufModels } from '../../src/llm/gguf/resident.ts'
import type { LlmClient, LlmSettings } from '../../src/llm/types.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { tempDir } from '../support/temp-dir.ts'
import { ggufWithHeader, tinyGguf } from '../support/tiny-gguf.ts'
import { waitFor } from '../support/wait.ts'

const model = `gguf:${tinyGguf()}`
const messages = [{ role: 'user' as const, content: 'Say something.' }]
const SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean' }, colour: { enum: ['red', 'green', 'blue'] } },
  required: ['ok', 'colour'],
}

function client(defaults: LlmSettings = {}): LlmClient {
  return createLlmClient({ env: {}, defaults: { model, threads: 1, ...defaults } })
}

async function failure(p: Promise<unknown>): Promise<TeaError> {
  try {
    await p
  } catch (e) {
    if (isTeaError(e)) return e
    throw e
  }
  throw new Error('expected the call to fail')
}

test('30-1 a call to gguf:<path> completes in the process: text, usage, the model named with its absolute path', async () => {
  const r = await client().call({ messages, max_tokens: 8 })
  assert.type(r.content, 'string')
  assert.is(r.model, model)
  assert.ok(r.usage.prompt_tokens > 5, `prompt tokens: ${r.usage.prompt_tokens}`)
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 8, `completion tokens: ${r.usage.completion_tokens}`)
  assert.is(r.attempts, 1)
})

test('30-1 format: a JSON Schema of enums and booleans gives a reply that parses and matches, whatever the seed', async () => {
  const llm = client({ max_tokens: 40 })
  for (const seed of [1, 2, 3]) {
    const r = await llm.call({ messages, format: SCHEMA, seed })
    const parsed = r.parsed as { ok: unknown; colour: unknown }
    assert.type(parsed.ok, 'boolean', r.content)
    assert.ok(['red', 'green', 'blue'].includes(String(parsed.colour)), r.content)
    assert.equal(Object.keys(parsed).sort(), ['colour', 'ok'])
  }
  const json = await llm.call({ messages, format: 'json', max_tokens: 60, temperature: 0 })
  assert.ok(json.parsed !== undefined, json.content)
})

test('30-1 a reply the grammar could not close within max_tokens is LLM_BAD_RESPONSE saying it was cut off', async () => {
  const e = await failure(
    client().call({ messages, format: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, max_tokens: 3 }),
  )
  assert.is(e.code, 'LLM_BAD_RESPONSE')
  assert.match(e.message, 'cut off by max_tokens after 3 tokens')
  assert.type(e.details?.content, 'string')
})

test('30-1 a reply the grammar allowed but the schema does not (a keyword no grammar holds) is LLM_BAD_RESPONSE naming the failure', async () => {
  // `not` is beyond a grammar: every reply of this shape fails it, so the check after sampling must catch it.
  const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], not: { required: ['ok'] } }
  const e = await failure(client({ max_tokens: 20 }).call({ messages, format: schema, seed: 1 }))
  assert.is(e.code, 'LLM_BAD_RESPONSE')
  assert.match(e.message, 'replied with JSON that does not match the requested schema')
  assert.ok(JSON.parse(String(e.details?.content)).ok !== undefined, 'the reply itself is whole JSON of the shape')
})

test('30-1 seed: the same seed and temperature give the same reply every time; temperature 0 too', async () => {
  const llm = client({ max_tokens: 24, temperature: 0.9 })
  const a = await llm.call({ messages, seed: 42 })
  const b = await llm.call({ messages, seed: 42 })
  assert.is(b.content, a.content)
  const others = await Promise.all([7, 8, 9].map((seed) => llm.call({ messages, seed })))
  assert.ok(
    others.some((o) => o.content !== a.content),
    'other seeds give another reply',
  )
  const greedy = client({ max_tokens: 16, temperature: 0 })
  assert.is((await greedy.call({ messages })).content, (await greedy.call({ messages })).content)
})

test('30-1 seed is one setting for every provider: Ollama gets it as options.seed, beside the options given', async () => {
  const server = await startFakeModelServer()
  server.fallback({ content: 'ok' })
  await createLlmClient({ env: { OLLAMA_HOST: server.url }, defaults: { model: 'ollama:m', seed: 9, options: { top_k: 5 } } }).call({
    messages,
  })
  assert.equal(server.chatRequests()[0]!.body.options, { top_k: 5, seed: 9 })
  await server.close()
})

test('30-1 llm.stream: onToken gets the reply token by token, and the tokens make the reply', async () => {
  const tokens: string[] = []
  const r = await client().call({ messages, max_tokens: 12, seed: 5, onToken: (t) => tokens.push(t) })
  assert.ok(tokens.length >= 2, `${tokens.length} tokens`)
  assert.is(tokens.join(''), r.content)
})

test('30-1 stop: a stop sequence ends the reply before it', async () => {
  const llm = client({ max_tokens: 30, temperature: 0 })
  const free = await llm.call({ messages })
  const cut = free.content.slice(3, 5)
  assert.ok(cut.trim() !== '', JSON.stringify(free.content))
  const r = await llm.call({ messages, stop: [cut] })
  assert.ok(r.content.length < free.content.length, `${JSON.stringify(r.content)} vs ${JSON.stringify(free.content)}`)
  assert.not.match(r.content, cut)
})

test('30-1 llm.embed: one vector per text, of the model dimension (64), the same text giving the same vector', async () => {
  const llm = createLlmClient({ env: {}, defaults: { model: `gguf:${tinyGguf(true)}`, threads: 1 } })
  const r = await llm.embed!({ input: ['hello world', 'another text', 'hello world'] })
  assert.is(r.embeddings.length, 3)
  for (const v of r.embeddings) assert.is(v.length, 64)
  assert.equal(r.embeddings[2], r.embeddings[0])
  assert.not.equal(r.embeddings[1], r.embeddings[0])
  assert.is(r.model, `gguf:${tinyGguf(true)}`)
})

test('30-2 an abort (Ctrl-C) stops the generation at once: the call ends cancelled, a token or so after the signal', async () => {
  const controller = new AbortController()
  let tokens = 0
  let atAbort = -1
  const call = client({ max_tokens: 1500, temperature: 0 }).call({
    messages,
    seed: 3,
    signal: controller.signal,
    onToken: () => {
      tokens++
      if (tokens === 5) {
        atAbort = tokens
        controller.abort()
      }
    },
  })
  const e = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  assert.ok(isControlSignal(e), `cancelled, not ${String(e)}`)
  assert.ok(tokens - atAbort <= 1, `${tokens - atAbort} tokens after the abort`)
})

// Greedy sampling (temperature 0) keeps the tiny model from its end-of-turn token: a long generation to stop.
test('30-2 a timeout stops a long generation: LLM_TIMEOUT naming the model file, not retried', async () => {
  const started = Date.now()
  const e = await failure(client({ max_tokens: 1900, temperature: 0, timeout: 0.3, max_retries: 2 }).call({ messages, seed: 1 }))
  assert.is(e.code, 'LLM_TIMEOUT')
  assert.match(e.message, `the GGUF model at ${tinyGguf()}`)
  assert.is(e.details?.attempts, 1, 'a local model that timed out is not asked again')
  assert.ok(Date.now() - started < 10_000)
})

test('30-2 one model in memory, shared by every client (every run) in the process; calls queue one at a time', async () => {
  await unloadIdleGgufModels()
  const a = client({ max_tokens: 6 })
  const b = client({ max_tokens: 6 })
  const replies = await Promise.all([a.call({ messages }), b.call({ messages }), a.call({ messages })])
  assert.is(replies.length, 3)
  assert.equal(loadedGgufModels(), [tinyGguf()])
})

test('30-2 runs of two agents at once in one process (as tea serve runs them) share the one loaded model', async () => {
  await unloadIdleGgufModels()
  const dir = tempDir('tea-gguf-runs-')
  copyFileSync(tinyGguf(), join(dir, 'm.gguf'))
  const agent = (name: string) =>
    `name: ${name}\nsettings:\n  llm: { model: gguf:m.gguf, threads: 1, max_tokens: 4 }\nnodes:\n  - name: a\n    uses: llm.call\n    with: { prompt: "${name}" }\n    output: { said: "{{ result.content }}" }\n  - name: b\n    uses: llm.call\n    with: { prompt: again }\n`
  const registry = buildRegistry()
  const runs = ['one', 'two'].map((name) => {
    const { spec } = loadAgentText(agent(name), join(dir, `${name}.yaml`), registry)
    const llm = createLlmClient({ env: {}, defaults: spec!.settings.llm })
    return startRun(spec!, { store: createMemoryStore(), registry, llm }, { runId: name })
  })
  const results = await Promise.all(runs)
  assert.equal(
    results.map((r) => r.status),
    ['completed', 'completed'],
  )
  assert.equal(loadedGgufModels(), [join(dir, 'm.gguf')], 'one model in memory for both runs')
  await unloadIdleGgufModels()
})

test('30-2 scheduler.slots: two calls at once on two sequences of one context', async () => {
  const llm = client({ max_tokens: 10, scheduler: { slots: 2 } })
  const [x, y] = await Promise.all([llm.call({ messages, seed: 1 }), llm.call({ messages, seed: 1 })])
  assert.is(x!.content, y!.content, 'the same seed on either sequence gives the same reply')
})

test('30-2 scheduler: false: a call beyond the sequences waits for one, and stops waiting when cancelled', async () => {
  const llm = client({ scheduler: false, temperature: 0 })
  let tokens = 0
  const long = llm.call({ messages, max_tokens: 300, onToken: () => void tokens++ })
  await waitFor(() => tokens > 0, 'the first call to generate')
  const controller = new AbortController()
  const waiting = llm.call({ messages, max_tokens: 2, signal: controller.signal })
  // Twenty tokens later the second call is waiting for the one sequence, not still setting out.
  const at = tokens
  await waitFor(() => tokens > at + 20, 'the first call to go on')
  controller.abort()
  const e = await waiting.then(
    () => undefined,
    (e: unknown) => e,
  )
  assert.ok(isControlSignal(e), String(e))
  assert.ok((await long).usage.completion_tokens > 2)
  const next = await llm.call({ messages, max_tokens: 2 })
  assert.ok(next.usage.completion_tokens >= 1, 'the sequence went back to the pool')
})

test('30-2 scheduler.max_loaded: loading another GGUF model unloads the idle one (1, the default), or keeps both (2)', async () => {
  await unloadIdleGgufModels()
  const other = `gguf:${tinyGguf(true)}`
  await client({ max_tokens: 2 }).call({ messages })
  await client({ max_tokens: 2, model: other }).call({ messages })
  assert.equal(loadedGgufModels(), [tinyGguf(true)], 'one model in memory')
  const two = { max_tokens: 2, scheduler: { max_loaded: 2 } }
  await Promise.all([client(two).call({ messages }), client({ ...two, model: other }).call({ messages })])
  assert.equal(loadedGgufModels().sort(), [tinyGguf(), tinyGguf(true)].sort())
  await unloadIdleGgufModels()
  assert.equal(loadedGgufModels(), [])
})

test('30-2 keep_alive: the model is unloaded once it has been idle that long (0: at once)', async () => {
  await client({ max_tokens: 2, keep_alive: '150ms' }).call({ messages })
  assert.ok(loadedGgufModels().includes(tinyGguf()), 'loaded right after the call')
  await waitFor(() => !loadedGgufModels().includes(tinyGguf()), 'the model to be unloaded after 150 ms idle')
  await client({ max_tokens: 2, keep_alive: 0 }).call({ messages })
  await waitFor(() => !loadedGgufModels().includes(tinyGguf()), 'keep_alive 0 to unload at once', { timeoutMs: 2000 })
  const again = await client({ max_tokens: 2 }).call({ messages })
  assert.type(again.content, 'string', 'an unloaded model loads again at its next call')
})

test('30-5 a prompt longer than the context is LLM_CONTEXT_OVERFLOW with both sizes, never silently cut', async () => {
  const long = [{ role: 'user' as const, content: 'word '.repeat(400) }]
  const e = await failure(client({ n_ctx: 128 }).call({ messages: long }))
  assert.is(e.code, 'LLM_CONTEXT_OVERFLOW')
  assert.match(e.message, /the prompt is \d+ tokens, and the context of the GGUF model .* holds 128/)
  assert.match(String(e.hint), 'n_ctx')
  const embed = await failure(
    createLlmClient({ env: {}, defaults: { model: `gguf:${tinyGguf(true)}`, n_ctx: 64 } }).embed!({ input: ['x '.repeat(200)] }),
  )
  assert.is(embed.code, 'LLM_CONTEXT_OVERFLOW')
})

test('30-1 max_reply_bytes holds for a GGUF model too: LLM_REPLY_TOO_LARGE, the generation stopped', async () => {
  const e = await failure(client({ max_tokens: 400, temperature: 1, max_reply_bytes: 20 }).call({ messages, seed: 2 }))
  assert.is(e.code, 'LLM_REPLY_TOO_LARGE')
})

test('30-5 bad model files through the client: missing, not GGUF, cut short, unknown architecture: coded, the process unharmed', async () => {
  const dir = tempDir('tea-gguf-bad-')
  writeFileSync(join(dir, 'text.gguf'), 'hello\n')
  copyFileSync(tinyGguf(), join(dir, 'cut.gguf'))
  truncateSync(join(dir, 'cut.gguf'), 100_000)
  ggufWithHeader(join(dir, 'odd.gguf'), 'nonesuch', 64)
  const cases: Array<[string, string]> = [
    ['missing.gguf', 'GGUF_NOT_FOUND'],
    ['text.gguf', 'GGUF_NOT_GGUF'],
    ['cut.gguf', 'GGUF_TRUNCATED'],
    ['odd.gguf', 'GGUF_UNSUPPORTED_ARCH'],
  ]
  for (const [file, code] of cases) {
    const e = await failure(createLlmClient({ env: {}, defaults: { model: `gguf:${file}`, model_dir: dir } }).call({ messages }))
    assert.is(e.code, code, `${file}: ${e.message}`)
    assert.match(e.message, join(dir, file), 'the message names the path')
    assert.ok(e.hint, 'and the fix')
  }
  assert.type((await client({ max_tokens: 2 }).call({ messages })).content, 'string', 'a good model still runs after them')
})

test("30-1 relative paths start from the agent's folder; TEA's provider: local reads model_path and TEA_MODEL_PATH", async () => {
  const dir = tempDir('tea-gguf-rel-')
  mkdirSync(join(dir, 'models'))
  copyFileSync(tinyGguf(), join(dir, 'models', 'm.gguf'))
  const path = join(dir, 'models', 'm.gguf')
  const rel = await createLlmClient({ env: {}, defaults: { model: 'gguf:models/m.gguf', model_dir: dir, max_tokens: 2 } }).call({
    messages,
  })
  assert.is(rel.model, `gguf:${path}`)
  const local = await createLlmClient({
    env: {},
    defaults: { provider: 'local', model_path: 'models/m.gguf', model_dir: dir, max_tokens: 2 },
  }).call({
    messages,
  })
  assert.is(local.model, `gguf:${path}`)
  const env = await createLlmClient({
    env: { TEA_MODEL_PATH: path },
    defaults: { provider: 'local', model_path: 'nowhere.gguf', max_tokens: 2 },
  }).call({
    messages,
  })
  assert.is(env.model, `gguf:${path}`, 'TEA_MODEL_PATH before model_path, as in TEA')
  await unloadIdleGgufModels()
})

test('30-1 tools are offered through the template (their documentation goes into the prompt); the reply comes back', async () => {
  const llm = client({ max_tokens: 6 })
  const plain = await llm.call({ messages })
  const tools = [
    {
      type: 'function' as const,
      function: {
        name: 'lookup',
        description: 'Looks a word up',
        parameters: { type: 'object', properties: { word: { type: 'string' } } },
      },
    },
  ]
  const r = await llm.call({ messages, tools })
  assert.ok(r.usage.prompt_tokens > plain.usage.prompt_tokens + 10, `${r.usage.prompt_tokens} vs ${plain.usage.prompt_tokens}`)
  assert.type(r.content, 'string')
  for (const c of r.tool_calls ?? []) assert.is(c.name, 'lookup')
})

test('30-1 a GGUF run recorded on one machine replays on another: cassettes name the model by its file, not its folder', async () => {
  const dir = tempDir('tea-gguf-cassette-')
  const cassette = join(dir, 'run.jsonl')
  const recorder = createLlmClient({ env: {}, record: cassette, defaults: { model, threads: 1, max_tokens: 6, seed: 4 } })
  const recorded = await recorder.call({ messages })
  await recorder.close()
  const replayer = createLlmClient({ env: {}, replay: cassette, defaults: { model: 'gguf:/somewhere/else/tiny.gguf' } })
  const replayed = await replayer.call({ messages })
  assert.is(replayed.content, recorded.content)
  const miss = await failure(createLlmClient({ env: {}, replay: cassette, defaults: { model: 'gguf:/x/other.gguf' } }).call({ messages }))
  assert.is(miss.code, 'CASSETTE_MISS')
})

test('30-1 chat_format: a wrong one is INVALID_PARAMS naming those tea knows; chatml is taken', async () => {
  const e = await failure(client({ chat_format: 'klingon' }).call({ messages }))
  assert.is(e.code, 'INVALID_PARAMS')
  assert.match(String(e.hint), 'chatml')
  assert.type((await client({ chat_format: 'chatml', max_tokens: 2 }).call({ messages })).content, 'string')
})

test.run()
