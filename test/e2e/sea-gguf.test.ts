import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { missingTools } from '../../scripts/build/qemu.mjs'
import { skipIf } from '../support/skip.ts'
import { ggufWithHeader } from '../support/tiny-gguf.ts'
import { tempDir } from '../support/temp-dir.ts'
import { ensureSea, ROOT, runExe, SEA_REQUIRE_WARNING, targets, type RunResult } from './sea-harness.ts'

// Issue 30 (item 3, item 6 and "Done when"): GGUF models run by llama.cpp inside each target's single executable,
// on its own architecture (ARM through qemu), with the tiny random-weight model scripts/tiny-gguf.mjs writes: a
// run completes, a `format:` reply (an enum and a boolean, which the grammar alone decides: the weights are
// random) parses and matches, the addon is extracted once into the cache dir and only when a GGUF model is used,
// and each bad model file is a coded error. A target without the llama feature says which builds have it.
// Few tokens and one thread: qemu makes every token slow. TEA_SEA_TARGET=NAME runs one target (scripts/test.mjs).

const watchdog = setTimeout(() => {
  console.error('test/e2e/sea-gguf.test.ts: still running after 15 minutes; giving up')
  process.exit(1)
}, 15 * 60_000)
watchdog.unref()

const agent = (model: string): string => `name: gguf-on-board
settings:
  llm:
    model: "gguf:${model}"
    temperature: 0
    seed: 7
    threads: 1
    n_ctx: 512
    max_tokens: 6
    timeout: 600
    max_retries: 0
nodes:
  - name: say
    uses: llm.call
    with:
      prompt: hi
    output:
      said: "{{ result.content }}"
  - name: pick
    uses: llm.call
    with:
      prompt: pick one
      max_tokens: 64
      format:
        type: object
        properties:
          ok: { type: boolean }
          colour: { enum: [red, green, blue] }
        required: [ok, colour]
    output:
      picked: "{{ result.parsed }}"
`

const only = process.env.TEA_SEA_TARGET
const runnable = targets().filter((target) => {
  if (only && target.name !== only) return false
  const missing = process.env.TEA_SKIP_SEA === '1' ? ['TEA_SKIP_SEA=1'] : missingTools(target.arch)
  if (!missing.length) return true
  const t = suite(`sea gguf ${target.name}`)
  skipIf(t, `${missing.join(', ')}; install with: bash .ci/install-sea-deps.sh`, `GGUF models in the ${target.name} executable`, () => {})
  t.run()
  return false
})

function noWarnings(r: RunResult, what: string): void {
  assert.not.match(r.stderr, SEA_REQUIRE_WARNING, `${what}: the SEA required a non-built-in module`)
}

/** The folders the executable extracted llama.cpp into (`<cache>/llama/<hash>/`). */
function llamaFolders(cache: string): string[] {
  const dir = join(cache, 'llama')
  return existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : []
}

const withLlama = runnable.filter((t) => t.features.llama).map((t) => t.name)

for (const target of runnable) {
  const t = suite(`sea gguf ${target.name}`)
  const ctx = { dir: '', exe: '', model: '' }
  t.before(async () => {
    ctx.dir = tempDir(`tea-sea-gguf-${target.name}-`)
    ctx.exe = (await ensureSea(target.name)).file
    ctx.model = join(ctx.dir, 'tiny.gguf')
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'tiny-gguf.mjs'), ctx.model])
  })
  t.after(() => rmSync(ctx.dir, { recursive: true, force: true }))

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    TEA_CACHE_DIR: join(ctx.dir, 'cache'),
    HOME: ctx.dir,
    ...extra,
  })
  const run = (file: string, data: string, extra: Record<string, string> = {}): Promise<RunResult> =>
    runExe(target, ctx.exe, ['run', file, '-q', '--data-dir', join(ctx.dir, data)], { env: env(extra), cwd: ctx.dir, timeoutMs: 600_000 })

  if (!target.features.llama) {
    t(
      `issue 30 item 3: a gguf: model in ${target.name}, which lacks the llama feature, is a coded error naming the builds that have it`,
      async () => {
        const file = join(ctx.dir, 'agent.yaml')
        writeFileSync(file, agent('tiny.gguf'))
        const r = await run(file, 'no-llama')
        assert.is(r.code, 1, r.stderr)
        assert.match(r.stderr, '[LLM_BAD_MODEL]')
        assert.match(r.stderr, `this build (${target.name}) cannot run GGUF models: it lacks the 'llama' feature`)
        // armv7's llama.cpp is compiled from source (scripts/build/llama-source.mjs): only the core build lacks it.
        assert.match(r.stderr, 'the linux-arm64, linux-armv7 and linux-x64 builds have it')
        assert.not.match(r.stderr, /\n\s+at /, 'a stack trace')
        noWarnings(r, 'no llama')
        assert.equal(llamaFolders(join(ctx.dir, 'cache')), [])
      },
    )
    t.run()
    continue
  }

  t('issue 30 item 3: a run that uses no GGUF model extracts and loads nothing of llama.cpp', async () => {
    const file = join(ctx.dir, 'plain.yaml')
    writeFileSync(file, 'name: plain\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n')
    const r = await run(file, 'plain')
    assert.is(r.code, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout), { a: 1 })
    assert.equal(llamaFolders(join(ctx.dir, 'cache')), [])
  })

  t(`issue 30 done-when: tea run of a gguf: agent completes in the ${target.name} executable and its format: reply parses`, async () => {
    const file = join(ctx.dir, 'agent.yaml')
    writeFileSync(file, agent('tiny.gguf'))
    const r = await run(file, 'gguf')
    assert.is(r.code, 0, r.stderr)
    noWarnings(r, 'gguf run')
    const state = JSON.parse(r.stdout)
    assert.type(state.said, 'string')
    assert.type(state.picked.ok, 'boolean')
    assert.ok(['red', 'green', 'blue'].includes(state.picked.colour), JSON.stringify(state.picked))
    assert.equal(Object.keys(state.picked).sort(), ['colour', 'ok'])
    // The addon and its libraries, extracted once into the cache dir, of the target's own arch.
    const folders = llamaFolders(join(ctx.dir, 'cache'))
    assert.is(folders.length, 1)
    const addon = join(folders[0]!, 'llama-addon.node')
    assert.is(readFileSync(addon).readUInt16LE(18), { x64: 62, arm64: 183, arm: 40 }[target.arch])
    const mtime = statSync(addon).mtimeMs
    // Again: the same reply (temperature 0, a seed), from the files already there.
    const again = await run(file, 'gguf-again')
    assert.is(again.code, 0, again.stderr)
    assert.equal(JSON.parse(again.stdout), state)
    assert.equal(llamaFolders(join(ctx.dir, 'cache')), folders)
    assert.is(statSync(addon).mtimeMs, mtime, 'the addon was written again')
  })

  t('issue 30 item 5: each bad model file is a coded error from the executable, with the path, never a stack or a signal', async () => {
    const bytes = readFileSync(ctx.model)
    const files: Record<string, string> = {
      missing: join(ctx.dir, 'absent.gguf'),
      text: join(ctx.dir, 'notes.gguf'),
      cut: join(ctx.dir, 'cut.gguf'),
      arch: join(ctx.dir, 'alien.gguf'),
      // 16 Gi float32 values (64 GiB) on a sparse file: the header claims more than any board has free.
      huge: ggufWithHeader(join(ctx.dir, 'huge.gguf'), 'llama', 16 * 1024 ** 3),
    }
    writeFileSync(files.text!, 'this is not a model\n'.repeat(100))
    writeFileSync(files.cut!, bytes.subarray(0, Math.floor(bytes.length / 2)))
    // general.architecture "llama" → "zzzzz", same length: a whole, valid GGUF of an architecture llama.cpp lacks.
    const arch = Buffer.from(bytes)
    const at = arch.indexOf(Buffer.from('general.architecture'))
    const value = arch.indexOf(Buffer.from('llama'), at)
    assert.ok(at > 0 && value > at && value - at < 40, 'tiny.gguf names its architecture')
    arch.write('zzzzz', value, 'latin1')
    writeFileSync(files.arch!, arch)
    const want: Record<string, string> = {
      missing: 'GGUF_NOT_FOUND',
      text: 'GGUF_NOT_GGUF',
      cut: 'GGUF_TRUNCATED',
      arch: 'GGUF_UNSUPPORTED_ARCH',
      huge: 'GGUF_TOO_LARGE',
      overflow: 'LLM_CONTEXT_OVERFLOW',
    }
    // One run meets them all (a launch under qemu takes seconds): a node per bad file, each under on_error: continue,
    // and a run: node after it that keeps the error it left in __error__; the last asks the good model with a
    // prompt longer than its context.
    const nodes = [...Object.entries(files), ['overflow', ctx.model] as const].flatMap(([kind, path]) => [
      `  - name: ask_${kind}`,
      '    uses: llm.call',
      `    with: { model: "gguf:${path}", prompt: "${kind === 'overflow' ? 'word '.repeat(600) : 'hi'}" }`,
      '    on_error: { mode: continue }',
      `  - name: keep_${kind}`,
      `    run: "return { errors: { ...state.errors, ${kind}: state.__error__ }, __error__: null }"`,
    ])
    const all = join(ctx.dir, 'bad-all.yaml')
    writeFileSync(all, [agent(ctx.model).split('\nnodes:\n')[0], 'initial_state: { errors: {} }', 'nodes:', ...nodes, ''].join('\n'))
    const r = await run(all, 'bad-all')
    assert.is(r.signal, null, `killed by ${r.signal}: ${r.stderr}`)
    assert.is(r.code, 0, r.stderr)
    noWarnings(r, 'bad files')
    const errors = JSON.parse(r.stdout).errors as Record<string, { code: string; message: string }>
    assert.equal(Object.fromEntries(Object.entries(errors).map(([k, e]) => [k, e?.code])), want)
    for (const [kind, path] of Object.entries(files)) assert.match(errors[kind]!.message, path, `${kind}: the message names the file`)
    assert.match(errors.overflow!.message, /the prompt is \d+ tokens, and the context of the GGUF model .* holds 512/)
    // And as the CLI says it when a run stops at one: the code and the file on stderr, exit 1, no stack.
    const one = join(ctx.dir, 'bad-cut.yaml')
    writeFileSync(one, agent(files.cut!))
    const failed = await run(one, 'bad-cut')
    assert.is(failed.code, 1, failed.stderr)
    assert.match(failed.stderr, '[GGUF_TRUNCATED]')
    assert.match(failed.stderr, files.cut!)
    assert.not.match(failed.stderr, /\n\s+at /, 'a stack trace')
  })

  t.run()
}

if (withLlama.length === 0 && runnable.length > 0 && !only) console.error('sea-gguf: no runnable target has the llama feature')
