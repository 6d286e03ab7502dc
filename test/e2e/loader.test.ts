import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { programOf, readTail } from '../../src/sea/loader.ts'
import { BUNDLE, tea } from './cli.ts'

// The bundle's loader (src/sea/loader.ts): --version without the program, and a code cache the bundle writes after
// its first run and uses from then on. TEA_TRACE_LOADER=1 makes the loader say what it did. Coverage is off in
// these children (see env below): under it the loader neither reads nor writes a cache.

const tmp = mkdtempSync(join(tmpdir(), 'tea-loader-test-'))
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
    assert.is(r.stdout, `tea 0.1.0 (linux-x64; features: planning, reasoning, prolog, lua, python; node ${process.version})\n`)
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
  const programs = readdirSync(join(cache, 'code'))
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

test('commands other than run, resume and worker read the cache but do not write one', async () => {
  const cache = join(tmp, 'cache-validate')
  const agent = join(tmp, 'validate.yaml')
  writeFileSync(agent, AGENT)
  const r = await tea(['validate', agent], { env: env(cache) })
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stderr, 'code cache absent')
  assert.not.ok(existsSync(join(cache, 'code')), 'validate wrote a code cache')
})

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
