/**
 * Outbound HTTP's destination policy through the real CLI, as an attacker would use it (security-probe-2 H, issue 28
 * item 10): a page that redirects `web.scrape` into the board's own API, a model that asks a ReAct loop to fetch
 * loopback, every spelling of loopback, the allow list by host and by range, the redirect limit, credentials on a
 * cross-origin redirect, and `tea serve`'s own API from an agent it runs.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { opensslMissing, selfSignedCertificate } from '../support/openssl.ts'
import { skipIf } from '../support/skip.ts'
import { scratch, tea, type Result } from './cli.ts'
import { startServe } from './serve-harness.ts'

interface Site {
  port: number
  url: string
  hits: Array<{ url: string; headers: IncomingMessage['headers'] }>
  connections: number
  close(): Promise<void>
}

async function site(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Site> {
  const server: Server = createServer((req, res) => {
    s.hits.push({ url: req.url ?? '', headers: req.headers })
    handle(req, res)
  })
  const s: Site = {
    port: 0,
    url: '',
    hits: [],
    connections: 0,
    close: () => {
      server.closeAllConnections()
      return new Promise((done) => server.close(() => done()))
    },
  }
  server.on('connection', () => s.connections++)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  s.port = (server.address() as AddressInfo).port
  s.url = `http://127.0.0.1:${s.port}`
  return s
}

/** An agent of one node: `uses` on `with: {url: state.url, …}`, its result under `got`; `allow` as settings.http.allow. */
function agent(uses: string, allow: string[] | undefined, extra = ''): string {
  return `name: fetcher
${allow ? `settings: { http: { allow: ${JSON.stringify(allow)} } }\n` : ''}nodes:
  - name: fetch
    uses: ${uses}
    with: { url: "{{ state.url }}"${extra} }
    output: got
`
}

async function fetchWith(
  uses: string,
  allow: string[] | undefined,
  url: string,
  extra = '',
  env: Record<string, string> = {},
): Promise<Result> {
  const s = scratch({ 'a.yaml': agent(uses, allow, extra) })
  try {
    return await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q', '--set', `url=${url}`], { env })
  } finally {
    s.cleanup()
  }
}

test('H: web.scrape of a page that 302-redirects to localhost:<port>/api/runs/… is refused at the second hop', async () => {
  const api = await site((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"api_key":"sk-secret"}'))
  const page = await site((_req, res) => res.writeHead(302, { location: `http://localhost:${api.port}/api/runs/s1` }).end())
  try {
    // Only the first server's address is allowed: what is refused is where the redirect leads.
    const r = await fetchWith('web.scrape', ['127.0.0.1'], `${page.url}/news`)
    assert.is(r.code, 1, r.stdout)
    assert.match(r.stderr, 'HTTP_DESTINATION_DENIED')
    assert.match(r.stderr, `localhost (resolved to`)
    assert.match(r.stderr, 'settings.http.allow')
    assert.not.match(r.stdout + r.stderr, 'sk-secret')
    assert.equal(
      page.hits.map((h) => h.url),
      ['/news'],
    )
    assert.is(api.connections, 0)
  } finally {
    await page.close()
    await api.close()
  }
})

test('H: a ReAct model that asks for web.scrape of a loopback URL gets a refusal as its observation; nothing is fetched', async () => {
  const inner = await site((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('api_key=sk-secret'))
  const model = await startFakeModelServer()
  const s = scratch({
    'agent.yaml': `name: researcher
settings:
  llm: { model: "ollama:tiny" }
nodes:
  - name: research
    uses: reason.react
    with: { goal: "Read the page", tools: [web.scrape] }
    output: research
`,
  })
  try {
    model.script(
      { content: { thought: 'Read it.', action: 'web.scrape', action_input: { url: `http://127.1:${inner.port}/` } } },
      { match: 'is a loopback address', content: { thought: 'Refused.', action: 'finish', action_input: { answer: 'refused' } } },
    )
    // The model server is on loopback too: model calls are configured by the agent's author, not by the policy.
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q'], { env: { OLLAMA_HOST: model.url } })
    assert.is(r.code, 0, r.stderr)
    const research = JSON.parse(r.stdout).research
    assert.is(research.final_answer, 'refused')
    assert.match(research.steps[0].observation, `127.0.0.1 is a loopback address`)
    assert.not.match(r.stdout, 'sk-secret')
    assert.is(inner.connections, 0)
  } finally {
    await model.close()
    await inner.close()
    s.cleanup()
  }
})

test('H: every spelling of loopback, unspecified and link-local is refused by http.get, with no connection made', async () => {
  const target = await site((_req, res) => res.end('reached'))
  const p = target.port
  try {
    for (const url of [
      `http://localhost:${p}/`,
      `http://2130706433:${p}/`,
      `http://0x7f.1:${p}/`,
      `http://127.1:${p}/`,
      `http://[::ffff:7f00:1]:${p}/`,
      `http://[::1]:${p}/`,
      `http://0.0.0.0:${p}/`,
      `http://[::]:${p}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      `https://127.0.0.1:${p}/`,
    ]) {
      const r = await fetchWith('http.get', undefined, url, ', timeout: 5')
      assert.is(r.code, 1, `${url}: ${r.stdout}`)
      assert.match(r.stderr, 'HTTP_DESTINATION_DENIED', url)
      assert.match(r.stderr, 'settings.http.allow', url)
    }
    assert.is(target.connections, 0)
  } finally {
    await target.close()
  }
})

test('settings.http.allow opens a host by name and addresses by CIDR; a name is not its address', async () => {
  const target = await site((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('reached'))
  try {
    const body = (r: Result): string => JSON.parse(r.stdout).got.body
    assert.is(body(await fetchWith('http.get', ['127.0.0.1'], `${target.url}/`)), 'reached')
    assert.is(body(await fetchWith('http.get', ['localhost'], `http://localhost:${target.port}/`)), 'reached')
    assert.is(body(await fetchWith('http.get', ['127.0.0.0/8', '::1/128'], `http://localhost:${target.port}/`)), 'reached')
    const byName = await fetchWith('http.get', ['127.0.0.1'], `http://localhost:${target.port}/`)
    assert.is(byName.code, 1)
    assert.match(byName.stderr, 'HTTP_DESTINATION_DENIED')
    const bad = await fetchWith('http.get', ['10.0.0.0/99'], `${target.url}/`)
    assert.is(bad.code, 2, bad.stderr)
    assert.match(bad.stderr, 'settings.http.allow')
    assert.is(target.hits.length, 3)
  } finally {
    await target.close()
  }
})

test('a sixth redirect is HTTP_REDIRECT_LIMIT; five are followed', async () => {
  const chain = await site((req, res) => {
    const n = Number(req.url!.slice(1))
    if (n > 0) return void res.writeHead(302, { location: `/${n - 1}` }).end()
    res.writeHead(200, { 'content-type': 'text/plain' }).end('end of the chain')
  })
  try {
    const five = await fetchWith('http.get', ['127.0.0.1'], `${chain.url}/5`)
    assert.is(JSON.parse(five.stdout).got.body, 'end of the chain')
    chain.hits.length = 0
    const six = await fetchWith('web.scrape', ['127.0.0.1'], `${chain.url}/6`)
    assert.is(six.code, 1)
    assert.match(six.stderr, 'HTTP_REDIRECT_LIMIT')
    assert.is(chain.hits.length, 6, 'the sixth Location is not requested')
  } finally {
    await chain.close()
  }
})

test('a cross-origin redirect does not forward Cookie, Authorization or Proxy-Authorization', async () => {
  const other = await site((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('landed'))
  const page = await site((_req, res) => res.writeHead(307, { location: `http://localhost:${other.port}/landing` }).end())
  try {
    const headers = ', headers: { Cookie: "session=abc", Authorization: "Bearer t0k", Proxy-Authorization: "Basic eA==", X-Trace: "1" }'
    const r = await fetchWith('http.get', ['127.0.0.1', 'localhost'], `${page.url}/start`, headers)
    assert.is(r.code, 0, r.stderr)
    assert.is(page.hits[0]!.headers.cookie, 'session=abc', 'the first origin gets what the agent sent')
    const seen = other.hits[0]!.headers
    assert.equal([seen.cookie, seen.authorization, seen['proxy-authorization'], seen['x-trace']], [undefined, undefined, undefined, '1'])
  } finally {
    await page.close()
    await other.close()
  }
})

skipIf(
  test,
  opensslMissing(),
  'H: an https page is read under the policy, and its redirect to loopback is checked like any other hop',
  async () => {
    const s = scratch()
    const { key, cert } = selfSignedCertificate(s.dir, 'tls')
    const inner = await site((_req, res) => res.end('secret'))
    const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      if (req.url === '/away') return void res.writeHead(302, { location: `http://localhost:${inner.port}/` }).end()
      res.writeHead(200, { 'content-type': 'text/plain' }).end('over tls')
    })
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
    const env = { NODE_EXTRA_CA_CERTS: cert }
    try {
      const ok = await fetchWith('http.get', ['127.0.0.1'], `${base}/`, '', env)
      assert.is(ok.code, 0, ok.stderr)
      assert.is(JSON.parse(ok.stdout).got.body, 'over tls')
      // Node's fetch followed an https page's redirects itself, where no check saw them.
      const away = await fetchWith('http.get', ['127.0.0.1'], `${base}/away`, '', env)
      assert.is(away.code, 1)
      assert.match(away.stderr, 'HTTP_DESTINATION_DENIED')
      assert.match(away.stderr, 'localhost (resolved to')
      assert.is(inner.connections, 0)
    } finally {
      server.closeAllConnections()
      await new Promise((done) => server.close(done))
      await inner.close()
      s.cleanup()
    }
  },
)

test("H: an agent run by tea serve cannot reach serve's own API, even with 127.0.0.1 allowed", async () => {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/fetcher.yaml'), agent('web.scrape', ['127.0.0.1']))
  const d = await startServe(['--data-dir', s.path('data'), '--agents', s.path('agents')])
  // A page elsewhere redirects into the daemon's API, as in the probe.
  const page = await site((_req, res) => res.writeHead(302, { location: `${d.url}/api/runs` }).end())
  try {
    const started = await d.json('POST', '/api/runs', { agent: 'fetcher', input: { url: `${page.url}/` }, run_id: 'f1' })
    assert.is(started.status, 201, JSON.stringify(started.body))
    const events = await d.events('f1')
    const error = events.find((e) => e.type === 'error')
    assert.ok(error, JSON.stringify(events))
    assert.is(error!.error.code, 'HTTP_DESTINATION_DENIED')
    assert.match(error!.error.message, "tea serve's own listener")
    assert.is((await d.json('GET', '/api/runs/f1')).body.status, 'failed')
  } finally {
    assert.is(await d.stop(), 0)
    await page.close()
    s.cleanup()
  }
})

test.run()
