import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { sha256Hex } from '../../src/core/sha256.ts'
// @ts-expect-error plain JavaScript build script without type declarations
import { fetchRuntime } from '../../scripts/fetch-runtimes.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { SEA_V8_FLAGS } from '../../scripts/build/sea-build.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { loadTarget } from '../../scripts/build/targets.mjs'
import { BUNDLE, ROOT, requireBundle, tea } from './cli.ts'
import { tempDir } from '../support/temp-dir.ts'

// What a start of the built program does with an agent file (issue 14): its YAML parse kept in the cache dir for
// the next start (src/agent/parse-cache.ts), and a large file loaded with V8's optimising compilers off
// (src/cli/lean.ts) — checked on Node 24, the executables' Node, with the executables' V8 flags.

const tmp = tempDir('tea-agent-start-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

const env = (cache: string) => ({ TEA_CACHE_DIR: cache, NODE_V8_COVERAGE: '' })

const AGENT = `name: kept
initial_state:
  who: world
nodes:
  - name: greet
    run: |
      return { greeting: 'hello ' + state.who }
  - name: done
    run: |
      return { done: true }
`

test('the first run keeps the parse under the build; the next runs read it and end the same; an edit is a new text', async () => {
  const cache = join(tmp, 'cache')
  const agent = join(tmp, 'kept.yaml')
  writeFileSync(agent, AGENT)
  const run = () => tea(['run', agent, '-q', '--data-dir', join(tmp, 'data')], { env: env(cache) })
  const first = await run()
  assert.is(first.code, 0, first.stderr)
  const builds = readdirSync(join(cache, 'agents'))
  assert.is(builds.length, 1)
  const folder = join(cache, 'agents', builds[0]!)
  assert.equal(readdirSync(folder), [`${sha256Hex(AGENT)}.json`])
  assert.equal(JSON.parse(readFileSync(join(folder, `${sha256Hex(AGENT)}.json`), 'utf8')).data.nodes[0].name, 'greet')
  const second = await run()
  assert.is(second.code, 0, second.stderr)
  assert.equal(JSON.parse(second.stdout), JSON.parse(first.stdout))
  assert.equal(JSON.parse(second.stdout), { who: 'world', greeting: 'hello world', done: true })

  writeFileSync(agent, AGENT.replace("'hello '", "'hi '"))
  const edited = await run()
  assert.is(edited.code, 0, edited.stderr)
  assert.is(JSON.parse(edited.stdout).greeting, 'hi world')
  assert.is(readdirSync(folder).length, 2)
})

/**
 * Runs `tea` with a preload that records whether the yaml package's modules ran: they ask `Symbol.for` for their
 * node kinds (`yaml.map`, …) as they are evaluated, and nothing else in the program asks for such a key.
 */
async function runNotingYaml(args: string[], cache: string) {
  const noted = join(tmp, `yaml-${Math.random().toString(36).slice(2)}.txt`)
  const preload = join(tmp, 'note-yaml.cjs')
  writeFileSync(
    preload,
    `const f = Symbol.for; let seen = false
Symbol.for = function (k) { if (String(k).startsWith('yaml.')) seen = true; return f.call(Symbol, k) }
process.on('exit', () => require('fs').writeFileSync(process.env.TEA_E2E_NOTED, String(seen)))\n`,
  )
  const r = await tea(args, { env: { ...env(cache), NODE_OPTIONS: `--require ${preload}`, TEA_E2E_NOTED: noted } })
  return { r, yaml: readFileSync(noted, 'utf8') === 'true' }
}

test('the yaml package runs only for a text without a kept parse: not at the start of every run (issue 14)', async () => {
  const cache = join(tmp, 'cache-lazy')
  const agent = join(tmp, 'lazy.yaml')
  writeFileSync(agent, AGENT)
  const args = ['run', agent, '-q', '--data-dir', join(tmp, 'data-lazy')]
  const first = await runNotingYaml(args, cache)
  assert.is(first.r.code, 0, first.r.stderr)
  assert.ok(first.yaml, 'the first run parses the text with the yaml package')
  const second = await runNotingYaml(args, cache)
  assert.is(second.r.code, 0, second.r.stderr)
  assert.equal(JSON.parse(second.r.stdout), { who: 'world', greeting: 'hello world', done: true })
  assert.not.ok(second.yaml, 'a run from the kept parse never evaluates the yaml package')
})

test('the yaml package compiles from a code cache of its own: written by the first parse, used by the next; kept per build, the newest 4', async () => {
  const cache = join(tmp, 'cache-side')
  const code = join(cache, 'code')
  // Caches of four earlier builds of the side module, and a folder that is not one of its caches.
  for (const [i, name] of [
    'side-yaml-0000000000000001',
    'side-yaml-0000000000000002',
    'side-yaml-0000000000000003',
    'side-yaml-0000000000000004',
    'side-yamlish',
  ].entries()) {
    mkdirSync(join(code, name), { recursive: true })
    utimesSync(join(code, name), 1000 + i, 1000 + i)
  }
  const run = async (text: string) => {
    const agent = join(tmp, `side-${sha256Hex(text).slice(0, 8)}.yaml`)
    writeFileSync(agent, text)
    const r = await tea(['run', agent, '-q', '--data-dir', join(tmp, 'data-side')], { env: { ...env(cache), TEA_TRACE_LOADER: '1' } })
    assert.is(r.code, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout), { who: 'world', greeting: 'hello world', done: true })
    return /tea: side module yaml compiled and run in [\d.]+ ms \(code cache (\w+)\)/.exec(r.stderr)?.[1]
  }
  assert.is(await run(AGENT), 'absent', 'the first parse on this machine compiles the package from its text')
  const sides = readdirSync(code).filter((n) => n.startsWith('side-yaml-'))
  assert.is(sides.length, 4, `the oldest earlier build's cache goes: ${sides}`)
  assert.not.ok(sides.includes('side-yaml-0000000000000001'))
  assert.ok(readdirSync(code).includes('side-yamlish'), 'a folder that is not a side cache is left alone')
  const ours = sides.find((n) => !/^side-yaml-0{15}\d$/.test(n))!
  assert.equal(readdirSync(join(code, ours)).length, 1)
  assert.is(await run(AGENT), undefined, 'a start from the kept parse does not load the package at all')
  assert.is(await run(`${AGENT}# another text\n`), 'used', 'the next parse compiles it from its cache')
  // A cache cut short (a full disk, a crash while copying the cache dir) is rejected, the run ends well, and the
  // cache is written again.
  const file = join(code, ours, readdirSync(join(code, ours))[0]!)
  writeFileSync(file, Buffer.alloc(100, 7))
  assert.is(await run(`${AGENT}# a third text\n`), 'rejected')
  assert.is(await run(`${AGENT}# a fourth text\n`), 'used')
})

test('a problem that depends on the environment is reported at the same place from a kept parse as from the text', async () => {
  const cache = join(tmp, 'cache-env')
  const agent = join(tmp, 'env.yaml')
  writeFileSync(agent, AGENT.replace('nodes:', 'settings:\n  llm:\n    base_url: "http://${TEA_E2E_HOST}:11434"\nnodes:'))
  const kept = await tea(['run', agent, '-q', '--data-dir', join(tmp, 'data-env')], { env: { ...env(cache), TEA_E2E_HOST: 'pi.local' } })
  assert.is(kept.code, 0, kept.stderr)
  assert.is(readdirSync(join(cache, 'agents', readdirSync(join(cache, 'agents'))[0]!)).length, 1)
  const fromKept = await tea(['validate', agent], { env: env(cache) })
  const fromText = await tea(['validate', agent], { env: env(join(tmp, 'cache-env-other')) })
  assert.is(fromKept.code, 2, fromKept.stdout + fromKept.stderr)
  assert.match(
    fromKept.stdout + fromKept.stderr,
    'env.yaml:6:15: AGENT_INVALID settings.llm.base_url: environment variable TEA_E2E_HOST is not set',
  )
  assert.is(fromKept.stdout + fromKept.stderr, fromText.stdout + fromText.stderr)
})

test('a 200-node file loads with no function optimised, and run: code after the load is optimised as usual', () => {
  requireBundle()
  const node24 = fetchRuntime(loadTarget(ROOT, 'linux-x64'), { log: () => {} }).nodeBin as string
  let text = 'name: wide\ninitial_state:\n  i: 0\nnodes:\n'
  for (let i = 0; i < 200; i++) text += `  - name: n${i}\n    uses: json.transform\n    with: { data: { a: ${i}, b: 2 }, pick: [a] }\n`
  // A hot function in the last node: V8 must still compile it with its optimisers once the load has ended.
  text +=
    '  - name: hot\n    run: |\n      function hotSquare(x) { return x * x }\n      let s = 0\n      for (let i = 0; i < 300000; i++) s += hotSquare(i % 7)\n      return { s }\n'
  const agent = join(tmp, 'wide.yaml')
  writeFileSync(agent, text)
  assert.ok(text.length > 4096, 'large enough for a lean load')
  const r = spawnSync(node24, [...SEA_V8_FLAGS, '--trace-opt', BUNDLE, 'run', agent, '-q', '--data-dir', join(tmp, 'data-wide')], {
    env: { ...process.env, ...env(join(tmp, 'cache-wide')) },
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.is(r.status, 0, r.stderr)
  const compiled = r.stdout.split('\n').filter((l) => l.startsWith('[completed compiling'))
  assert.ok(compiled.length > 0, 'nothing was optimised: the optimisers were not turned back on')
  const others = compiled.filter((l) => !l.includes('hotSquare') && !l.includes('OSR'))
  assert.equal(others, [], 'a function of the load was optimised')
  assert.match(r.stdout, /"s": \d+/)
})

test.run()
