import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { SEA_V8_FLAGS } from '../../scripts/build/sea-build.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { loadTarget } from '../../scripts/build/targets.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { fetchRuntime } from '../../scripts/fetch-runtimes.mjs'
import { programOf, readTail } from '../../src/sea/loader.ts'
import { BUNDLE, ROOT, requireBundle, tea } from './cli.ts'
import { tempDir } from '../support/temp-dir.ts'

// The bundle's loader (src/sea/loader.ts): --version without the program, and a code cache the bundle writes after
// its first run and uses from then on. TEA_TRACE_LOADER=1 makes the loader say what it did. Coverage is off in
// these children (see env below): under it the loader neither reads nor writes a cache.

const tmp = tempDir('tea-loader-test-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

const AGENT = `name: three
initial_state:
  name: world
nodes:
  - name: greet
    run: |
      return { greeting: 'hello ' + state.name }
  - name: shape
    run: |
      return { shaped: state.greeting.toUpperCase() }
  - name: done
    run: |
      return { done: true }
`

// An empty NODE_V8_COVERAGE, not an absent one: Node copies the parent's value into a child's environment unless
// the key is given (child_process), and under c8 that would put the children under coverage.
const env = (cache: string) => ({ TEA_CACHE_DIR: cache, TEA_TRACE_LOADER: '1', NODE_V8_COVERAGE: '' })

test('--version, -V and version are answered by the loader alone, with the build and this Node', async () => {
  for (const arg of ['--version', '-V', 'version']) {
    const r = await tea([arg], { env: env(join(tmp, 'v-cache')) })
    assert.is(r.code, 0, r.stderr)
    assert.is(
      r.stdout,
      `tea 0.1.0 (linux-x64; features: planning, reasoning, prolog, lua, python, fleet, llama; node ${process.version})\n`,
    )
    assert.is(r.stderr, '', 'the program was loaded')
  }
  assert.not.ok(existsSync(join(tmp, 'v-cache')), '--version wrote to the cache dir')
})

test('the first run writes a code cache, the next runs use it, and the results are the same', async () => {
  const cache = join(tmp, 'cache')
  const agent = join(tmp, 'three.yaml')
  writeFileSync(agent, AGENT)
  const run = () => tea(['run', agent, '-q', '--data-dir', join(tmp, 'data')], { env: env(cache) })
  const first = await run()
  assert.is(first.code, 0, first.stderr)
  assert.match(first.stderr, 'code cache absent')
  const programs = programFolders(cache)
  assert.is(programs.length, 1)
  assert.ok(readdirSync(join(cache, 'code', programs[0]!)).some((f) => f.startsWith(`${process.version}-${process.arch}-`)))
  for (const r of [await run(), await run()]) {
    assert.is(r.code, 0, r.stderr)
    assert.match(r.stderr, 'code cache used')
    assert.equal(JSON.parse(r.stdout), JSON.parse(first.stdout))
    // The trace also says where memory went: RSS at the loader, after the compile, and the peak, which is the most.
    const rss = /tea: RSS ([\d.]+) MiB at the loader, ([\d.]+) MiB after the compile; peak ([\d.]+) MiB/.exec(r.stderr)
    assert.ok(rss, r.stderr)
    const [atLoader, compiled, peak] = rss.slice(1).map(Number) as [number, number, number]
    assert.ok(atLoader > 0 && compiled >= atLoader && peak >= compiled, rss[0])
  }
  assert.equal(JSON.parse(first.stdout), { name: 'world', greeting: 'hello world', shaped: 'HELLO WORLD', done: true })
})

// On Node 24 the loader frees the buffer it read a code cache into once V8 has compiled from it (issue 14). A cache
// file cut to a few bytes (a full disk, a crash while copying the cache dir) is read into a slice of Node's shared
// buffer pool, which must never be freed: everything the run allocates later would lose its memory.
test('on Node 24 a cache file cut to a few bytes is rejected and the run ends well; a whole one is used and its buffer freed', () => {
  requireBundle()
  const node24 = fetchRuntime(loadTarget(ROOT, 'linux-x64'), { log: () => {} }).nodeBin as string
  const cache = join(tmp, 'cache-24')
  const agent = join(tmp, 'three-24.yaml')
  writeFileSync(agent, AGENT)
  const run = () =>
    spawnSync(node24, [...SEA_V8_FLAGS, BUNDLE, 'run', agent, '-q', '--data-dir', join(tmp, 'data-24')], {
      env: { ...process.env, ...env(cache) },
      encoding: 'utf8',
      timeout: 60_000,
    })
  const first = run()
  assert.is(first.status, 0, first.stderr)
  const dir = join(cache, 'code', programFolders(cache)[0]!)
  const [file] = readdirSync(dir).filter((f) => f.startsWith('v24.'))
  assert.ok(file, 'Node 24 wrote its own cache')
  writeFileSync(join(dir, file), Buffer.alloc(100, 7))
  const cut = run()
  assert.is(cut.status, 0, cut.stderr)
  assert.match(cut.stderr, 'code cache rejected')
  assert.not.match(cut.stderr, 'its buffer freed')
  assert.equal(JSON.parse(cut.stdout), JSON.parse(first.stdout))
  // The rejected cache was written afresh at that run's exit; the next run uses it and frees its buffer.
  const whole = run()
  assert.is(whole.status, 0, whole.stderr)
  assert.match(whole.stderr, 'code cache used')
  assert.match(whole.stderr, 'its buffer freed')
  assert.equal(JSON.parse(whole.stdout), { name: 'world', greeting: 'hello world', shaped: 'HELLO WORLD', done: true })
})

test("commands other than run, resume and worker read the program's cache but do not write one", async () => {
  const cache = join(tmp, 'cache-validate')
  const agent = join(tmp, 'validate.yaml')
  writeFileSync(agent, AGENT)
  const r = await tea(['validate', agent], { env: env(cache) })
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stderr, 'code cache absent')
  assert.equal(programFolders(cache), [], 'validate wrote a code cache of the program')
})

/** The program's code-cache folders in a cache dir (side modules keep theirs beside them, as `side-<name>-<hash>`). */
function programFolders(cache: string): string[] {
  const code = join(cache, 'code')
  return existsSync(code) ? readdirSync(code).filter((n) => !n.startsWith('side-')) : []
}

test('a run that fails writes no cache (it may not have reached the code runs need)', async () => {
  const cache = join(tmp, 'cache-fail')
  const r = await tea(['run', join(tmp, 'missing.yaml'), '-q', '--data-dir', join(tmp, 'data-fail')], { env: env(cache) })
  assert.is(r.code, 2, r.stderr)
  assert.not.ok(existsSync(join(cache, 'code')), 'a failed run wrote a code cache')
})

test("the build's warm-up writes the executable's tail where it is told, and removes nothing beside it", async () => {
  const work = join(tmp, 'build-work')
  const out = join(work, 'sea', 'tea.tail')
  mkdirSync(join(work, 'sea'), { recursive: true })
  for (let i = 0; i < 6; i++) writeFileSync(join(work, `other-${i}`), 'keep me')
  const agent = join(tmp, 'build.yaml')
  writeFileSync(agent, AGENT)
  const r = await tea(['run', agent, '-q', '--data-dir', join(tmp, 'data-build')], {
    env: { ...env(join(tmp, 'cache-build')), TEA_BUILD_TAIL: out },
  })
  assert.is(r.code, 0, r.stderr)
  const tail = readTail(out)
  assert.ok(tail, 'no tail written')
  // The program as the loader compiled it (the bundle's, wrapped), starting on the line the bundle has it on.
  const bundle = readFileSync(BUNDLE)
  assert.is(tail.source, programOf(bundle).source)
  assert.is(bundle.toString('latin1').split('\n')[tail.line]!.slice(0, 40), tail.source.split('\n')[1]!.slice(0, 40))
  assert.ok(tail.cache.byteLength > 100_000, `a code cache of ${tail.cache.byteLength} bytes`)
  assert.equal(readdirSync(work).sort(), ['other-0', 'other-1', 'other-2', 'other-3', 'other-4', 'other-5', 'sea'])
})

test.run()
