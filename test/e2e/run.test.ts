import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.ts'
import { BUNDLE, bundleEnv, scratch, tea } from './cli.ts'

const Run = suite('tea run (end to end)')
let server: FakeModelServer
Run.before(async () => {
  server = await startFakeModelServer()
})
Run.after(async () => {
  await server.close()
})

const HELLO = `
name: hello
settings: { llm: { model: "ollama:tiny", timeout: 5, max_retries: 1 } }
initial_state: { name: world }
nodes:
  - name: greet
    uses: llm.call
    with: { prompt: "Say hello to {{ state.name }}." }
    output: { greeting: "{{ result.content }}" }
`

Run('prints the final state as JSON on stdout and progress on stderr', async () => {
  const s = scratch({ 'a.yaml': HELLO })
  server.script({ content: 'Hello, Ada!' })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '--set', 'name=Ada'], { env: { OLLAMA_HOST: server.url } })
  assert.is(r.code, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout), { name: 'Ada', greeting: 'Hello, Ada!' })
  assert.match(r.stderr, /✓ greet/)
  assert.is(server.chatRequests().at(-1)?.body.messages[0].content, 'Say hello to Ada.')
  s.cleanup()
})

// Node's fetch (undici) is ~1 MB of JavaScript compiled at a process's first request: a hello run through the
// executable took 132 ms with it and 62 without (issue 14). http: URLs are reached over node:http.

/** Runs `a.yaml` of `s` with a preload that lists, at exit, every module Node loaded; returns the run and the undici modules. */
async function runListingModules(s: ReturnType<typeof scratch>, env: Record<string, string> = {}) {
  const list = s.path('loaded.txt')
  writeFileSync(
    s.path('loaded.cjs'),
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')))\n`,
  )
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'], {
    env: { ...env, NODE_OPTIONS: `--require ${s.path('loaded.cjs')}` },
  })
  assert.is(r.code, 0, r.stderr)
  const loaded = readFileSync(list, 'utf8').split('\n')
  assert.ok(loaded.includes('NativeModule http'), 'the list is not the one expected')
  return { r, undici: loaded.filter((m) => m.includes('undici')) }
}

Run("a model call loads neither Node's fetch (undici) nor the Headers global (issue 14)", async () => {
  const s = scratch({ 'a.yaml': HELLO })
  server.script({ content: 'Hello, Ada!' })
  const { r, undici } = await runListingModules(s, { OLLAMA_HOST: server.url })
  assert.is(JSON.parse(r.stdout).greeting, 'Hello, Ada!')
  assert.equal(undici, [])
  s.cleanup()
})

Run('an http.get of an http: URL loads no undici either, and reads the page (issue 14)', async () => {
  const page = createServer((_req, res) => res.end('{"t": 21.5}')).listen(0, '127.0.0.1')
  await once(page, 'listening')
  const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/temp`
  const s = scratch({
    'a.yaml': `name: sensor\nsettings: { http: { allow: ["127.0.0.1"] } }\nnodes:\n  - name: read\n    uses: http.get\n    with: { url: "${url}" }\n    output: { body: "{{ result.body }}" }\n`,
  })
  try {
    const { r, undici } = await runListingModules(s)
    assert.is(JSON.parse(r.stdout).body, '{"t": 21.5}')
    assert.equal(undici, [])
  } finally {
    page.close()
    s.cleanup()
  }
})

Run('--stream prints NDJSON events ending with complete, and llm.stream tokens arrive as llm_token events', async () => {
  const s = scratch({
    'a.yaml': `
name: s
settings: { llm: { model: "ollama:tiny" } }
nodes:
  - name: talk
    uses: llm.stream
    with: { prompt: "count" }
    output: { text: "{{ result.content }}" }
`,
  })
  server.script({ content: 'one two three', tokens: ['one', ' two', ' three'] })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '--stream'], { env: { OLLAMA_HOST: server.url } })
  assert.is(r.code, 0, r.stderr)
  const events = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  assert.equal(
    events.map((e) => e.type).filter((t) => t !== 'llm_token'),
    ['start', 'node_start', 'node_end', 'complete'],
  )
  assert.equal(
    events.filter((e) => e.type === 'llm_token').map((e) => e.token),
    ['one', ' two', ' three'],
  )
  assert.equal(events.at(-1).state, { text: 'one two three' })
  s.cleanup()
})

Run('a model server that is not running gives one clear line naming the URL, exit 1, resumable', async () => {
  const s = scratch({ 'a.yaml': HELLO })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'], { env: { OLLAMA_HOST: 'http://127.0.0.1:9' } })
  assert.is(r.code, 1)
  assert.is(r.stdout, '')
  assert.match(r.stderr, /LLM_UNREACHABLE/)
  assert.match(r.stderr, /127\.0\.0\.1:9/)
  assert.match(r.stderr, /tea resume /)
  s.cleanup()
})

Run('a model server answering 500, garbage, or resetting the connection fails with a coded error', async () => {
  const s = scratch({ 'a.yaml': HELLO })
  for (const [step, code] of [
    [{ status: 500, body: 'boom', repeat: true }, 'LLM_HTTP_ERROR'],
    [{ garbage: 'this is not json', repeat: true }, 'LLM_BAD_RESPONSE'],
    [{ reset: true, repeat: true }, 'LLM_UNREACHABLE'],
  ] as const) {
    const broken = await startFakeModelServer()
    broken.script(step)
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'], { env: { OLLAMA_HOST: broken.url } })
    await broken.close()
    assert.is(r.code, 1, `${code}: ${r.stderr}`)
    assert.match(r.stderr, new RegExp(code))
    assert.not.match(r.stderr, /internal error/)
  }
  s.cleanup()
})

Run('--input that is not a JSON object is a usage error (exit 2)', async () => {
  const s = scratch({ 'a.yaml': HELLO, 'in.json': '[1, 2]' })
  for (const input of ['[1,2]', '"text"', '{broken', `@${s.path('in.json')}`]) {
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-i', input])
    assert.is(r.code, 2, input)
    assert.match(r.stderr, /JSON object/)
  }
  s.cleanup()
})

Run('-i @file.yaml is read as the input', async () => {
  const s = scratch({
    'a.yaml': 'name: x\nnodes:\n  - name: a\n    run: "return { twice: state.n * 2 }"\n',
    'in.yaml': 'n: 21\n',
  })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-i', `@${s.path('in.yaml')}`, '-q'])
  assert.is(r.code, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout), { n: 21, twice: 42 })
  s.cleanup()
})

Run('an invalid agent is refused before anything runs, with every problem (exit 2)', async () => {
  const s = scratch({ 'bad.yaml': 'name: x\nnodes:\n  - name: a\n    uses: llm.cal\n    goto: nowhere\n' })
  const r = await tea(['run', s.path('bad.yaml'), '--data-dir', s.path('data')])
  assert.is(r.code, 2)
  assert.match(r.stderr, /bad\.yaml:4:11: UNKNOWN_ACTION/)
  assert.match(r.stderr, /bad\.yaml:5:11: UNKNOWN_NODE/)
  s.cleanup()
})

Run('a template using an unknown variable fails loudly, naming node, field and template', async () => {
  const s = scratch({ 'a.yaml': 'name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: "{{ stat.text }}" }\n' })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(r.code, 1)
  assert.match(r.stderr, /TEMPLATE_ERROR/)
  assert.match(r.stderr, /node 'a'/)
  assert.match(r.stderr, /with\.text/)
  assert.match(r.stderr, /stat\.text/)
  s.cleanup()
})

Run('a template trying to reach constructor or __proto__ fails with a coded error', async () => {
  for (const t of ["{{ ''.constructor.constructor('return process')() }}", '{{ state.__proto__ }}', "{{ state['constructor'] }}"]) {
    const s = scratch({ 'a.yaml': `name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: "${t.replace(/"/g, '\\"')}" }\n` })
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.ok(r.code === 1 || r.code === 2, `${t}: exit ${r.code}`)
    assert.match(r.stderr, /TEMPLATE_(ERROR|SYNTAX)/, t)
    assert.not.match(r.stderr, /internal error/)
    s.cleanup()
  }
})

Run('a data dir that is not writable is a clear STORE_NOT_WRITABLE error', async () => {
  const s = scratch({ 'a.yaml': HELLO, file: 'not a dir' })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', `${s.path('file')}/sub`])
  assert.is(r.code, 1)
  assert.match(r.stderr, /STORE_NOT_WRITABLE/)
  assert.match(r.stderr, /file\/sub/)
  s.cleanup()
})

Run('tea run --run-id X for an unfinished run X refuses with a hint to resume', async () => {
  const s = scratch({ 'a.yaml': 'name: x\nnodes:\n  - name: a\n    run: "throw new Error(\'first time\')"\n' })
  const first = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '--run-id', 'job-7', '-q'])
  assert.is(first.code, 1)
  const again = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '--run-id', 'job-7', '-q'])
  assert.is(again.code, 2)
  assert.match(again.stderr, /RUN_EXISTS|already exists/)
  assert.match(again.stderr, /tea resume job-7/)
  s.cleanup()
})

Run('-o writes the final state to a file and --trace writes every event', async () => {
  const s = scratch({ 'a.yaml': 'name: x\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n' })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-o', s.path('out.json'), '--trace', s.path('t.jsonl'), '-q'])
  assert.is(r.code, 0, r.stderr)
  assert.is(r.stdout, '')
  assert.equal(JSON.parse(readFileSync(s.path('out.json'), 'utf8')), { a: 1 })
  const types = readFileSync(s.path('t.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).type)
  assert.equal(types, ['start', 'node_start', 'node_end', 'complete'])
  s.cleanup()
})

// tea writes its output straight to the descriptor (src/cli/io.ts); a descriptor that whoever started tea left
// non-blocking (perl sets O_NONBLOCK and execs; perl-base is part of every Debian) meets EAGAIN once the pipe is full,
// and the rest goes through a stream that is still writing when the run is over. The reader starts late here, so
// the 1 MB of final state fills the pipe: all of it must arrive, and the exit code is the run's.
Run('a run whose output is still queued when it ends (a slow reader, a non-blocking pipe) prints all of it', async () => {
  const s = scratch({ 'big.yaml': 'name: big\nnodes:\n  - name: a\n    run: "return { big: \'x\'.repeat(1 << 20) }"\n' })
  const nonBlocking = 'my $f = fcntl(STDOUT, F_GETFL, 0); fcntl(STDOUT, F_SETFL, $f | O_NONBLOCK) or die $!; exec @ARGV'
  const argv = ['-MFcntl', '-e', nonBlocking, '--', process.execPath, BUNDLE, 'run', s.path('big.yaml'), '-q', '--data-dir', s.path('data')]
  const child = spawn('perl', argv, { env: bundleEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.pause()
  const chunks: Buffer[] = []
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  setTimeout(() => child.stdout.on('data', (d: Buffer) => chunks.push(d)).resume(), 500)
  const code = await new Promise((done) => child.on('close', done))
  assert.is(code, 0, stderr)
  const out = Buffer.concat(chunks).toString()
  assert.is(out.length, (1 << 20) + 16, 'every byte of the final state')
  assert.is(JSON.parse(out).big.length, 1 << 20)
  s.cleanup()
})

Run.run()
