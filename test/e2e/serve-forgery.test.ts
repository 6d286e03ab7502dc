/**
 * `tea serve` against what a hostile page or client sends (issue 28 items 1 and 2; security-probe-2 A, F, M), as
 * raw HTTP: a body nested 1,500 deep, malformed %-escapes, a DNS-rebound Host, a cross-origin `text/plain` POST, an
 * Origin or Sec-Fetch-Site from another port, and the token as a cookie. Each is refused with its code, no run is
 * made, and the daemon goes on answering.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'
import { startServe, type Daemon } from './serve-harness.ts'

const HELLO = `name: hello
nodes:
  - name: a
    run: "return { a: 1 }"
`

function project() {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/hello.yaml'), HELLO)
  return { ...s, args: ['--data-dir', s.path('data'), '--agents', s.path('agents')] }
}

interface Reply {
  status: number
  body: any
}

/** One request with exactly these headers (no content type unless given; Host as given, else the right one). */
function raw(d: Daemon, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  const { hostname, port } = new URL(d.url)
  return new Promise((done, fail) => {
    const req = request({ host: hostname, port, method, path, headers: { host: `${hostname}:${port}`, ...headers } }, (res) => {
      let data = ''
      res.on('data', (c) => (data += c))
      res.on('end', () => {
        let parsed: unknown = data
        try {
          parsed = JSON.parse(data)
        } catch {}
        done({ status: res.statusCode!, body: parsed })
      })
    })
    req.on('error', fail)
    req.end(body)
  })
}

const JSON_TYPE = { 'content-type': 'application/json' }
const START = JSON.stringify({ agent: 'hello' })

async function runIds(d: Daemon): Promise<string[]> {
  return (await d.json('GET', '/api/runs')).body.map((r: { run_id: string }) => r.run_id)
}

test('28 serve A: a body nested 1,500 deep is 400 INPUT_TOO_DEEP, makes no run, and tea serve goes on answering', async () => {
  const p = project()
  const d = await startServe(p.args)
  try {
    const deep = `{"agent":"hello","run_id":"deep","input":{"x":${'['.repeat(1500)}${']'.repeat(1500)}}}`
    for (let i = 0; i < 3; i++) {
      const r = await raw(d, 'POST', '/api/runs', JSON_TYPE, deep)
      assert.is(r.status, 400, JSON.stringify(r.body))
      assert.is(r.body.error.code, 'INPUT_TOO_DEEP')
    }
    assert.is((await d.json('GET', '/api/health')).status, 200, 'still answering')
    assert.equal(await runIds(d), [], 'no run record was made')
    // Depth an agent may really use still runs.
    const nested = `{"agent":"hello","run_id":"fine","input":{"x":${'['.repeat(60)}1${']'.repeat(60)}}}`
    assert.is((await raw(d, 'POST', '/api/runs', JSON_TYPE, nested)).status, 201)
    await d.waitLog(/run fine completed/)
    const resumeDeep = await raw(
      d,
      'POST',
      '/api/runs/fine/resume',
      JSON_TYPE,
      `{"input":{"y":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}}`,
    )
    assert.is(resumeDeep.body.error.code, 'INPUT_TOO_DEEP')
  } finally {
    assert.is(await d.stop(), 0, d.stderr())
  }
  p.cleanup()
})

test('28 serve M: a malformed %-escape in the path is 400 BAD_REQUEST, in the old token cookie no error at all', async () => {
  const p = project()
  const token = 'forgery-test-token-0123456789'
  writeFileSync(p.path('token'), token)
  const d = await startServe([...p.args, '--token-file', p.path('token')])
  const auth = { authorization: `Bearer ${token}` }
  try {
    for (const path of ['/api/runs/%E0%A4%A', '/api/runs/%zz/events', '/%', '/api/%C0']) {
      const r = await raw(d, 'GET', path, auth)
      assert.is(r.status, 400, path)
      assert.is(r.body.error.code, 'BAD_REQUEST', path)
      assert.match(r.body.error.message, /malformed %-escape/)
    }
    const cookie = await raw(d, 'GET', '/api/runs', { cookie: 'tea_token=%E0%A4%A' })
    assert.is(cookie.status, 401)
    assert.is(cookie.body.error.code, 'UNAUTHORIZED')
    assert.is((await raw(d, 'GET', '/api/health', auth)).status, 200)
  } finally {
    await d.stop()
  }
  p.cleanup()
})

test('28 serve F: the Host must name the listener (DNS rebinding is 421 HOST_NOT_ALLOWED); --allow-host adds names', async () => {
  const p = project()
  const d = await startServe([...p.args, '--allow-host', 'board.lan', '--allow-host', 'proxy.example:443'])
  const { port } = new URL(d.url)
  try {
    for (const host of [
      `attacker.example:${port}`,
      'attacker.example',
      `127.0.0.1:${Number(port) + 1}`,
      `[::1]:${port}`,
      `localhost.evil:${port}`,
    ]) {
      for (const [method, body, headers] of [
        ['GET', undefined, {}],
        ['POST', START, JSON_TYPE],
      ] as const) {
        const r = await raw(d, method, '/api/runs', { ...headers, host }, body)
        assert.is(r.status, 421, `${method} Host: ${host}`)
        assert.is(r.body.error.code, 'HOST_NOT_ALLOWED', host)
      }
    }
    assert.equal(await runIds(d), [], 'a rebound page started nothing')
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `board.lan:${port}`,
      'board.lan',
      'proxy.example:443',
    ])
      assert.is((await raw(d, 'GET', '/api/health', { host })).status, 200, host)
    assert.is((await raw(d, 'GET', '/api/health', { host: 'proxy.example:8443' })).status, 421, 'NAME:PORT allows that port only')
  } finally {
    await d.stop()
  }
  p.cleanup()
})

test('28 serve F: allow_hosts in the config adds to --allow-host; an entry that is not a host is a start-up error (exit 2)', async () => {
  const p = project()
  writeFileSync(p.path('serve.yaml'), 'allow_hosts: [cfg.lan]\n')
  const d = await startServe([...p.args, '--config', p.path('serve.yaml'), '--allow-host', 'flag.lan'])
  try {
    for (const host of ['cfg.lan', 'flag.lan']) assert.is((await raw(d, 'GET', '/api/health', { host })).status, 200, host)
    assert.is((await raw(d, 'GET', '/api/health', { host: 'other.lan' })).status, 421)
  } finally {
    await d.stop()
  }
  const bad = await tea(['serve', '--listen', '127.0.0.1:0', ...p.args, '--allow-host', 'http://board.lan/'])
  assert.is(bad.code, 2, bad.stderr)
  assert.match(bad.stderr, /--allow-host takes NAME or NAME:PORT .*"http:\/\/board\.lan\/"/)
  p.cleanup()
})

test('28 serve F: a state-changing request must be Content-Type application/json (415): the cross-origin text/plain POST', async () => {
  const p = project()
  const d = await startServe(p.args)
  try {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      const r = await raw(d, 'POST', '/api/runs', type ? { 'content-type': type } : {}, START)
      assert.is(r.status, 415, String(type))
      assert.is(r.body.error.code, 'UNSUPPORTED_MEDIA_TYPE')
    }
    assert.equal(await runIds(d), [], 'no run started')
    assert.is((await raw(d, 'POST', '/api/runs/x/cancel', {})).status, 415, 'a body-less POST too (fetch no-cors sends no type)')
    const ok = await raw(
      d,
      'POST',
      '/api/runs',
      { 'content-type': 'application/json; charset=utf-8' },
      JSON.stringify({ agent: 'hello', run_id: 'ok' }),
    )
    assert.is(ok.status, 201)
  } finally {
    await d.stop()
  }
  p.cleanup()
})

test("28 serve F: another page's Origin or Sec-Fetch-Site (another port of this host too) is 403 ORIGIN_NOT_ALLOWED", async () => {
  const p = project()
  const d = await startServe(p.args)
  const { port } = new URL(d.url)
  try {
    for (const origin of ['http://localhost:18900', `http://127.0.0.1:${Number(port) + 1}`, 'http://attacker.example', 'null', `file://`]) {
      const r = await raw(d, 'POST', '/api/runs', { ...JSON_TYPE, origin }, START)
      assert.is(r.status, 403, origin)
      assert.is(r.body.error.code, 'ORIGIN_NOT_ALLOWED')
    }
    for (const site of ['same-site', 'cross-site']) {
      assert.is((await raw(d, 'POST', '/api/runs', { ...JSON_TYPE, 'sec-fetch-site': site }, START)).status, 403, site)
      assert.is((await raw(d, 'GET', '/api/runs', { 'sec-fetch-site': site, 'sec-fetch-mode': 'cors' })).status, 403, site)
    }
    assert.equal(await runIds(d), [], 'no run started')
    // The page's own origin, and a person following a link to the page from elsewhere, pass.
    const own = await raw(
      d,
      'POST',
      '/api/runs',
      { ...JSON_TYPE, origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
      START,
    )
    assert.is(own.status, 201, JSON.stringify(own.body))
    assert.is((await raw(d, 'GET', '/', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).status, 200)
  } finally {
    await d.stop()
  }
  p.cleanup()
})

test('28 serve F: with a token, the token as a cookie (what another port of the host would receive) authorises nothing', async () => {
  const p = project()
  const token = 'cookie-test-token-0123456789'
  writeFileSync(p.path('token'), token)
  const d = await startServe([...p.args, '--token-file', p.path('token')])
  const { port } = new URL(d.url)
  try {
    const cookie = `tea_token=${token}`
    const plain = await raw(d, 'POST', '/api/runs', { ...JSON_TYPE, cookie }, START)
    assert.is(plain.status, 401)
    const fromOtherPort = await raw(
      d,
      'POST',
      '/api/runs',
      { ...JSON_TYPE, cookie, origin: `http://127.0.0.1:${Number(port) + 7}`, 'sec-fetch-site': 'same-site' },
      START,
    )
    assert.is(fromOtherPort.status, 403)
    const login = await raw(d, 'GET', `/?token=${token}`, {})
    assert.is(login.status, 200)
    assert.is((await raw(d, 'GET', '/api/runs', { authorization: `Bearer ${token}` })).body.length, 0)
  } finally {
    await d.stop()
  }
  p.cleanup()
})

test.run()
