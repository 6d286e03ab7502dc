/**
 * Issue 30 from source, as a user runs it: `tea run` of agents whose model is a GGUF file beside them (the tiny
 * random-weight model, scripts/tiny-gguf.mjs), through the real llama.cpp addon. A run completes and its
 * schema-constrained reply parses; a seeded run repeats exactly; tokens stream; a run SIGKILLed or stopped with
 * Ctrl-C in the middle of a generation resumes like any other; a bad model file is a coded error, never a signal or
 * a stack; TEA's `backend: local` with `model_path` runs.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tinyGguf } from '../support/tiny-gguf.ts'
import { BUNDLE, bundleEnv, collect, scratch, type Result } from './cli.ts'

const ROOT = resolve(import.meta.dirname, '../..')

/**
 * `tea` as built (the x64 bundle with llama.cpp beside it, as npm test builds it: the in-process tests in
 * test/llm/gguf.test.ts run the provider from source), with its own data dir and no model server.
 */
function spawnTea(args: string[]): ChildProcess {
  return spawn(process.execPath, [BUNDLE, ...args], {
    cwd: ROOT,
    env: bundleEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
}

const tea = (args: string[]): Promise<Result> => collect(spawnTea(args), { timeoutMs: 60_000 })

const AGENT = `name: tiny
settings:
  llm:
    model: gguf:models/tiny.gguf
    threads: 1
    seed: 11
nodes:
  - name: say
    uses: llm.stream
    with: { prompt: "Say something.", max_tokens: 20 }
    output: { said: "{{ result.content }}" }
  - name: judge
    uses: llm.call
    with:
      prompt: "Is it good?"
      max_tokens: 40
      format:
        type: object
        properties:
          good: { type: boolean }
          mood: { enum: [calm, loud, odd] }
        required: [good, mood]
    output: { verdict: "{{ result.parsed }}" }
`

/** A scratch folder holding the agent and the tiny model in models/ beside it. */
function project(agent = AGENT): ReturnType<typeof scratch> {
  const s = scratch({ 'agent.yaml': agent })
  mkdirSync(s.path('models'))
  copyFileSync(tinyGguf(), s.path('models/tiny.gguf'))
  return s
}

test('30 tea run with model: gguf:<path> (relative to the agent) completes; the format: reply parses and matches', async () => {
  const s = project()
  const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(r.code, 0, r.stderr)
  const state = JSON.parse(r.stdout)
  assert.type(state.said, 'string')
  assert.type(state.verdict.good, 'boolean')
  assert.ok(['calm', 'loud', 'odd'].includes(state.verdict.mood), JSON.stringify(state.verdict))
  const again = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(again.code, 0, again.stderr)
  assert.equal(JSON.parse(again.stdout), state, 'settings.llm.seed: the run repeats exactly')
  s.cleanup()
})

test('30 --stream: llm.stream sends the GGUF reply token by token', async () => {
  const s = project()
  const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--stream'])
  assert.is(r.code, 0, r.stderr)
  const events = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; node?: string; token?: string; state?: { said?: string } })
  const tokens = events.filter((e) => e.type === 'llm_token' && e.node === 'say').map((e) => e.token)
  assert.ok(tokens.length >= 2, `${tokens.length} tokens`)
  const end = events.find((e) => e.type === 'run_end') as { state?: { said?: string } } | undefined
  if (end?.state?.said !== undefined) assert.is(tokens.join(''), end.state.said)
  s.cleanup()
})

// Greedy sampling keeps the tiny model from its end-of-turn token: a generation long enough to be interrupted.
const LONG = `name: long
settings:
  llm: { model: gguf:models/tiny.gguf, threads: 1, temperature: 0 }
nodes:
  - name: first
    run: "return { n: 1 }"
  - name: talk
    uses: llm.stream
    with: { prompt: "Talk.", max_tokens: 400 }
    output: { talk: "{{ result.content }}" }
  - name: last
    run: "return { n: 2 }"
`

/** Runs `args` with --stream and sends `signal` at the `count`th token of node `talk`. */
async function interruptAt(args: string[], signal: NodeJS.Signals, count: number): Promise<Result & { tokens: number }> {
  const child = spawnTea([...args, '--stream'])
  let tokens = 0
  let buffer = ''
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d
    const lines = buffer.split('\n')
    buffer = lines.pop()!
    for (const line of lines) if (line.includes('"llm_token"') && ++tokens === count) child.kill(signal)
  })
  return { ...(await collect(child, { timeoutMs: 60_000 })), tokens }
}

test('30-2 a run SIGKILLed in the middle of a GGUF generation resumes like any other, to the same final state', async () => {
  const reference = project(LONG)
  const ref = await tea(['run', reference.path('agent.yaml'), '--data-dir', reference.path('data'), '-q'])
  assert.is(ref.code, 0, ref.stderr)
  const s = project(LONG)
  const killed = await interruptAt(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'k'], 'SIGKILL', 20)
  assert.is(killed.signal, 'SIGKILL', killed.stderr)
  const runs = JSON.parse((await tea(['runs', '--data-dir', s.path('data'), '--json'])).stdout)
  assert.is(runs[0].status, 'running', 'the killed run is left marked running')
  const resumed = await tea(['resume', 'k', '--data-dir', s.path('data'), '-q'])
  assert.is(resumed.code, 0, resumed.stderr)
  assert.equal(JSON.parse(resumed.stdout), JSON.parse(ref.stdout))
  reference.cleanup()
  s.cleanup()
})

test('30-2 Ctrl-C in the middle of a GGUF generation stops it: exit 130, and the run resumes', async () => {
  const s = project(LONG)
  const stopped = await interruptAt(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'c'], 'SIGINT', 20)
  assert.is(stopped.code, 130, stopped.stderr)
  assert.ok(stopped.tokens < 300, `stopped after ${stopped.tokens} tokens, not at the end of the reply`)
  assert.match(stopped.stderr, 'tea resume c')
  const resumed = await tea(['resume', 'c', '--data-dir', s.path('data'), '-q'])
  assert.is(resumed.code, 0, resumed.stderr)
  assert.is(JSON.parse(resumed.stdout).n, 2)
  s.cleanup()
})

test('30-5 bad model files are coded errors with the path and the fix: never a signal, never a stack', async () => {
  const s = project()
  copyFileSync(s.path('models/tiny.gguf'), s.path('models/cut.gguf'))
  truncateSync(s.path('models/cut.gguf'), 4096)
  writeFileSync(s.path('models/text.gguf'), 'not a model\n')
  for (const [file, code] of [
    ['missing.gguf', 'GGUF_NOT_FOUND'],
    ['text.gguf', 'GGUF_NOT_GGUF'],
    ['cut.gguf', 'GGUF_TRUNCATED'],
  ] as const) {
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q', '--model', `gguf:models/${file}`])
    assert.is(r.signal, null)
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, code)
    assert.match(r.stderr, s.path(`models/${file}`))
    assert.not.match(r.stderr, /\n\s+at /, 'no stack trace')
  }
  s.cleanup()
})

test("30 TEA's backend: local with model_path runs the GGUF model (n_ctx, n_threads, n_gpu_layers read)", async () => {
  const s = project(`name: local-chat
settings:
  llm:
    backend: local
    model_path: models/tiny.gguf
    n_ctx: 512
    n_threads: 1
    n_gpu_layers: 0
nodes:
  - name: chat
    uses: llm.chat
    with:
      messages: [{ role: user, content: hi }]
      max_tokens: 5
    output: { model: "{{ result.model }}" }
`)
  const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(r.code, 0, r.stderr)
  assert.is(JSON.parse(r.stdout).model, `gguf:${s.path('models/tiny.gguf')}`)
  assert.not.match(r.stderr, 'TEA_UNSUPPORTED')
  s.cleanup()
})

test.run()
