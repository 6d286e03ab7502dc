/**
 * `tea serve` through the built bundle (issue 16, SPEC §3.11): the routes, the one-daemon lock, the token, the
 * limits, graceful shutdown, and every bad input the issue lists.
 */

import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'
import { declaredBody, httpJson, startGate, GATED, startServe } from './serve-harness.ts'

const HELLO = `name: hello
nodes:
  - name: a
    run: "return { a: (state.x || 0) + 1 }"
  - name: b
    run: "return { b: state.a + 1 }"
`

function project(extra: Record<string, string> = {}) {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/hello.yaml'), HELLO)
  writeFileSync(s.path('agents/gated.yaml'), GATED)
  for (const [name, text] of Object.entries(extra)) writeFileSync(s.path(`agents/${name}`), text)
  return { ...s, args: ['--data-dir', s.path('data'), '--agents', s.path('agents')] }
}

test('16 serve: start a run, follow its events, read its state, list it; SIGTERM exits 0', async () => {
  const p = project()
  const d = await startServe(p.args)
  try {
    const health = await d.json('GET', '/api/health')
    assert.is(health.status, 200)
    assert.is(health.body.ok, true)
    assert.ok(Array.isArray(health.body.features))
    assert.equal((await d.json('GET', '/api/agents')).body, [
      { name: 'gated', file: 'gated.yaml' },
      { name: 'hello', file: 'hello.yaml' },
    ])
    const started = await d.json('POST', '/api/runs', { agent: 'hello', input: { x: 10 }, run_id: 'r1' })
    assert.is(started.status, 201, JSON.stringify(started.body))
    assert.is(started.body.run_id, 'r1')
    // Fast nodes' node_end may follow the next node_start (checkpoints are pipelined: engine/checkpointer.ts).
    const types = (events: Array<Record<string, any>>) => events.map((e) => `${e.type}${e.node ? ` ${e.node}` : ''}`).sort()
    const events = await d.events('r1')
    assert.equal(types(events), ['complete', 'node_end a', 'node_end b', 'node_start a', 'node_start b', 'start'])
    assert.is(events[0]!.type, 'start')
    assert.equal(events.at(-1)!.state, { x: 10, a: 11, b: 12 })
    const run = await d.json('GET', '/api/runs/r1')
    assert.is(run.body.status, 'completed')
    assert.equal(run.body.state, { x: 10, a: 11, b: 12 })
    const list = await d.json('GET', '/api/runs')
    assert.equal(
      list.body.map((r: any) => [r.run_id, r.agent, r.status]),
      [['r1', 'hello', 'completed']],
    )
    assert.match(list.body[0].created_at, /^\d{4}-\d\d-\d\dT/)
    // A run id that exists is refused; a finished run's stream is its final event.
    assert.is((await d.json('POST', '/api/runs', { agent: 'hello', run_id: 'r1' })).status, 409)
    assert.equal(types(await d.events('r1')), types(events))
    const page = await httpJson(d.url, 'GET', '/')
    assert.is(page.status, 200)
    assert.match(String(page.body), /<title>tea serve<\/title>/)
    assert.not.match(String(page.body), /https?:\/\/(?!tea)/, 'the page loads nothing from elsewhere')
  } finally {
    assert.is(await d.stop(), 0, d.stderr())
  }
  assert.match(d.stderr(), /tea serve: stopped/)
  p.cleanup()
})

test('16 serve: a second tea serve on the same data dir is refused, naming the first', async () => {
  const p = project()
  const d = await startServe(p.args)
  try {
    const second = await tea(['serve', '--listen', '127.0.0.1:0', ...p.args])
    assert.is(second.code, 1, second.stderr)
    assert.match(second.stderr, new RegExp(`SERVE_RUNNING: tea serve is already running for .* \\(pid ${d.child.pid}, listening on`))
    assert.match(second.stderr, /hint: stop it first/)
  } finally {
    await d.stop()
  }
  // The lock went with the first; a new one starts.
  const again = await startServe(p.args)
  assert.is(await again.stop(), 0)
  p.cleanup()
})

test('16 serve: a non-loopback --listen without a token is a start-up error (exit 2)', async () => {
  const r = await tea(['serve', '--listen', '0.0.0.0:0', '--data-dir', '/nonexistent/never-made'])
  assert.is(r.code, 2)
  assert.match(r.stderr, /--listen 0\.0\.0\.0:0 reaches other machines: give --token-file too/)
  const bad = await tea(['serve', '--listen', 'nowhere'])
  assert.is(bad.code, 2)
  assert.match(bad.stderr, /--listen expects HOST:PORT/)
})

test('16 serve: with a token every API route needs it as a bearer header (401 otherwise, JSON error); never a cookie', async () => {
  const p = project()
  const token = 'a-long-secret-token-0123456789'
  writeFileSync(p.path('token'), `  ${token}\n`)
  const d = await startServe([...p.args, '--token-file', p.path('token')])
  try {
    for (const path of ['/api/health', '/api/runs', '/api/runs/x/events', '/api/tasks']) {
      const r = await d.json('GET', path)
      assert.is(r.status, 401, path)
      assert.is(r.body.error.code, 'UNAUTHORIZED')
    }
    assert.is((await d.json('GET', '/api/health', undefined, { authorization: 'Bearer wrong' })).status, 401)
    assert.is((await d.json('GET', '/api/health', undefined, { authorization: `Bearer ${token}x` })).status, 401)
    assert.is((await d.json('POST', '/api/runs', { agent: 'hello' }, { authorization: 'Bearer nope' })).status, 401)
    assert.is((await d.json('GET', '/api/health', undefined, { authorization: `Bearer ${token}` })).status, 200)
    // The page holds no data: served to anyone, it takes the token from its address into sessionStorage.
    const login = await d.json('GET', `/?token=${token}`)
    assert.is(login.status, 200)
    assert.is(login.headers['set-cookie'], undefined, 'no cookie: cookies reach every port of the host')
    assert.is(login.headers['referrer-policy'], 'no-referrer')
    assert.match(String(login.headers['content-security-policy']), /frame-ancestors 'none'/)
    assert.match(String(login.body), /sessionStorage/)
    assert.is((await d.json('GET', '/?token=wrong')).status, 401, 'a wrong token in the link is told at once')
    // The cookie an older tea serve set is no credential, and the page clears it.
    const cookie = { cookie: `tea_token=${encodeURIComponent(token)}` }
    const withCookie = await d.json('GET', '/api/runs', undefined, cookie)
    assert.is(withCookie.status, 401)
    assert.match(String((await d.json('GET', '/', undefined, cookie)).headers['set-cookie']), /^tea_token=; Max-Age=0/)
  } finally {
    await d.stop()
  }
  p.cleanup()
})

test('16 serve bad input: malformed JSON, wrong shapes, unknown routes, huge bodies, traversal, invalid agents', async () => {
  const p = project({ 'broken.yaml': 'name: broken\nnodes:\n  - name: a\n    uses: no.such.action\n  - name: a\n    run: 1\n' })
  writeFileSync(p.path('outside.yaml'), HELLO)
  symlinkSync(p.path('outside.yaml'), p.path('agents/link.yaml'))
  const d = await startServe(p.args)
  try {
    const malformed = await d.json('POST', '/api/runs', '{"agent": ')
    assert.is(malformed.status, 400)
    assert.is(malformed.body.error.code, 'BAD_REQUEST')
    const shape = await d.json('POST', '/api/runs', { agent: 5, input: [], extra: 1 })
    assert.is(shape.status, 400)
    assert.equal(shape.body.error.issues.map((i: any) => i.path.join('.')).sort(), ['agent', 'extra', 'input'])
    assert.is((await d.json('POST', '/api/runs', { agent: 'hello', run_id: '../../etc' })).status, 400)
    const unknown = await d.json('GET', '/api/nothing')
    assert.is(unknown.status, 404)
    assert.is(unknown.body.error.code, 'NOT_FOUND')
    assert.is((await d.json('DELETE', '/api/runs')).status, 404)
    // Refused before it is read: sent whole, the body could meet the closed connection before the answer was read.
    const huge = await declaredBody(d.url, '/api/runs', (2 << 20) + 100)
    assert.is(huge.status, 413)
    assert.is(huge.body.error.code, 'BODY_TOO_LARGE')
    for (const agent of ['../outside', '../outside.yaml', '/etc/passwd', 'link', 'agents/../../outside.yaml']) {
      const r = await d.json('POST', '/api/runs', { agent })
      assert.is(r.status, 400, agent)
      assert.is(r.body.error.code, 'PATH_OUTSIDE_AGENTS', agent)
    }
    const missing = await d.json('POST', '/api/runs', { agent: 'nope' })
    assert.is(missing.status, 404)
    assert.is(missing.body.error.code, 'AGENT_NOT_FOUND')
    const invalid = await d.json('POST', '/api/runs', { agent: 'broken' })
    assert.is(invalid.status, 400)
    assert.is(invalid.body.error.code, 'AGENT_INVALID')
    assert.ok(invalid.body.error.issues.length >= 2, JSON.stringify(invalid.body.error))
    assert.is((await d.json('GET', '/api/runs/none')).status, 404)
    assert.is((await d.json('GET', '/api/runs/none/events')).status, 404)
    assert.is((await d.json('POST', '/api/runs/none/resume', {})).status, 404)
    assert.is((await d.json('POST', '/api/runs/none/cancel')).status, 404)
    assert.is((await d.json('GET', '/api/health')).status, 200, 'the daemon is still up')
  } finally {
    assert.is(await d.stop(), 0)
  }
  p.cleanup()
})

test('16 serve: --max-concurrent queues runs; the memory guard refuses a run with 503 LOW_MEMORY', async () => {
  const p = project()
  const d = await startServe([...p.args, '--max-concurrent', '1'])
  const g = await startGate()
  try {
    const gate = g.url
    const first = await d.json('POST', '/api/runs', { agent: 'gated', run_id: 'g1', input: { gate } })
    const second = await d.json('POST', '/api/runs', { agent: 'gated', run_id: 'g2', input: { gate } })
    assert.is(first.body.status, 'running')
    assert.is(second.body.status, 'queued')
    assert.is((await d.json('GET', '/api/runs/g2')).body.status, 'queued')
    const listed = (await d.json('GET', '/api/runs')).body.map((r: any) => [r.run_id, r.status])
    assert.equal(listed, [
      ['g2', 'queued'],
      ['g1', 'running'],
    ])
    await g.waiting(1)
    assert.is((await d.json('GET', '/api/runs/g2')).body.status, 'queued', 'the second waits while the first is at the gate')
    g.open()
    const [e1, e2] = await Promise.all([d.events('g1'), d.events('g2')])
    assert.is(e1.at(-1)!.type, 'complete')
    assert.is(e2.at(-1)!.type, 'complete')
  } finally {
    await d.stop()
    await g.close()
  }
  const greedy = await startServe([...p.args, '--min-free-mb', String(1 << 20)])
  try {
    const r = await greedy.json('POST', '/api/runs', { agent: 'hello' })
    assert.is(r.status, 503)
    assert.is(r.body.error.code, 'LOW_MEMORY')
    assert.match(r.body.error.message, /below the 1048576 MB tea serve keeps free/)
  } finally {
    await greedy.stop()
  }
  p.cleanup()
})

test('16 serve: cancel stops a run after its checkpoint (409 when not running); resume with input finishes it', async () => {
  const p = project()
  const d = await startServe(p.args)
  const g = await startGate()
  try {
    await d.json('POST', '/api/runs', { agent: 'gated', run_id: 'c1', input: { gate: g.url } })
    await g.waiting(1)
    const cancel = await d.json('POST', '/api/runs/c1/cancel')
    assert.is(cancel.status, 202)
    await d.events('c1')
    const run = await d.json('GET', '/api/runs/c1')
    assert.is(run.body.status, 'cancelled')
    assert.is((await d.json('POST', '/api/runs/c1/cancel')).status, 409)
    g.open()
    const resumed = await d.json('POST', '/api/runs/c1/resume', { input: { answer: 42 } })
    assert.is(resumed.status, 202)
    const events = await d.events('c1')
    const final = events.at(-1)!
    assert.is(final.type, 'complete')
    assert.equal(final.state.answer, 42)
    assert.equal([final.state.first, final.state.last], [true, true])
    assert.is((await d.json('POST', '/api/runs/c1/resume', {})).status, 409, 'a completed run cannot be resumed')
  } finally {
    await d.stop()
    await g.close()
  }
  p.cleanup()
})

test('16 serve: a stuck SSE client never blocks a run; once the event window has passed it, it is cut off', async () => {
  // After the gate, 160 steps of ~300 KB updates: 48 MB of events, past the 24 MB kept for clients behind plus what
  // the kernel's socket buffers hold for a client that reads nothing (several MB on loopback).
  const big = `name: big
settings: { http: { allow: ["127.0.0.1"] } } # the test's gate is on loopback, which http.* refuses by default
nodes:
  - name: gate
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
  - name: grow
    run: "return { i: (state.i || 0) + 1, blob: 'x'.repeat(300000) }"
    goto:
      - if: "state.i < 160"
        to: grow
      - to: __end__
`
  const p = project({ 'big.yaml': big })
  const d = await startServe(p.args)
  const g = await startGate()
  try {
    assert.is((await d.json('POST', '/api/runs', { agent: 'big', run_id: 'big1', input: { gate: g.url } })).status, 201)
    // A client that asks for the stream and never reads a byte.
    const stuck = connect({ port: Number(new URL(d.url).port), host: '127.0.0.1' })
    stuck.pause()
    await new Promise((r) => stuck.once('connect', r))
    stuck.write(`GET /api/runs/big1/events HTTP/1.1\r\nhost: 127.0.0.1:${new URL(d.url).port}\r\nconnection: close\r\n\r\n`)
    await g.waiting(1)
    g.open()
    await d.waitLog(/run big1 completed/)
    assert.is((await d.json('GET', '/api/runs/big1')).body.state.i, 160, 'the run finished while a client read nothing')
    // A client arriving now gets what the window kept (the newest 8 MB), ending with the final event.
    const late = await d.events('big1')
    assert.is(late.at(-1)!.type, 'complete')
    assert.ok(late.length > 10 && late.length < 160, String(late.length))
    // The stuck client, read at last: cut off before the end (no final event), the connection closed by tea.
    let got = ''
    stuck.on('data', (chunk) => (got += chunk))
    stuck.resume()
    await new Promise((r) => stuck.once('close', r))
    assert.match(got, /^HTTP\/1\.1 200/)
    assert.not.match(got, /"type":"complete"/)
    assert.is((await d.json('GET', '/api/health')).status, 200)
  } finally {
    assert.is(await d.stop(), 0)
    await g.close()
  }
  p.cleanup()
})

test('16 serve --print-systemd: a unit running tea serve as this user after Ollama, hardened, writing only its dirs', async () => {
  const p = project()
  const r = await tea(['serve', '--print-systemd', ...p.args, '--listen', '127.0.0.1:8765'], { env: { TEA_CACHE_DIR: p.path('cache') } })
  assert.is(r.code, 0, r.stderr)
  const unit = r.stdout
  assert.match(unit, /^\[Unit\]\n/)
  assert.match(unit, /^After=network-online\.target ollama\.service$/m)
  assert.match(unit, new RegExp(`^User=${userInfo().username}$`, 'm'))
  assert.match(unit, /^WorkingDirectory=\/\S+$/m)
  assert.match(
    unit,
    new RegExp(`^ExecStart=\\S+ .*serve --data-dir ${p.path('data')} --agents ${p.path('agents')} --listen 127\\.0\\.0\\.1:8765$`, 'm'),
  )
  assert.match(unit, /^Restart=on-failure$/m)
  assert.match(unit, /^ProtectSystem=strict$/m)
  assert.match(unit, new RegExp(`^ReadWritePaths=${p.path('data')} -${p.path('cache')}$`, 'm'))
  assert.match(unit, /^WantedBy=multi-user\.target$/m)
  // Memory and restarts bounded (issue 28 item 6): the x64 build has Python, 224M + 2 runs x 256M.
  assert.match(unit, /^MemoryMax=736M$/m)
  const [unitPart = '', servicePart = ''] = unit.split('[Service]')
  assert.match(unitPart, /^StartLimitIntervalSec=600$/m)
  assert.match(unitPart, /^StartLimitBurst=6$/m, 'in [Unit], where systemd reads it')
  assert.not.match(servicePart, /StartLimit/)
  assert.not.ok(existsSync(p.path('data')), 'printing a unit starts nothing and writes nothing')
  const sized = await tea([
    'serve',
    '--print-systemd',
    ...p.args,
    '--max-concurrent',
    '1',
    '--resume-limit',
    '5',
    '--allow-host',
    'board.lan',
  ])
  assert.is(sized.code, 0, sized.stderr)
  assert.match(sized.stdout, /^MemoryMax=480M$/m)
  assert.match(sized.stdout, /^# 224M for this build \(with Python\) \+ 1 concurrent run x 256M \(settings\.run_memory_mb\)/m)
  assert.match(sized.stdout, /^StartLimitBurst=8$/m)
  assert.match(sized.stdout, /^ExecStart=.* --max-concurrent 1 --resume-limit 5 --allow-host board\.lan$/m)
  writeFileSync(p.path('serve.yaml'), 'max_concurrent: 3\nresume_limit: 0\n')
  const configured = await tea(['serve', '--print-systemd', '--config', p.path('serve.yaml')])
  assert.match(configured.stdout, /^MemoryMax=992M$/m, 'the config sizes it as the flags do')
  assert.match(configured.stdout, /^StartLimitBurst=3$/m)
  p.cleanup()
})

test.run()
