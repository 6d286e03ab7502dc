/**
 * The destination policy through `httpFetch`, against real servers on loopback (security-probe-2 H): what is
 * refused by default in every spelling, what `settings.http.allow` opens by name and by range, every redirect hop
 * checked, the redirect limit, credentials kept from another origin, and `tea serve`'s own listener.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { httpFetch } from '../../src/core/http.ts'
import { allowEntryProblem, destinationPolicy, markServeListener } from '../../src/core/http-policy.ts'
import { rejection, rejects } from '../support/expect.ts'

const Policy = suite('destination policy (settings.http.allow)')

interface Running {
  url: string
  port: number
  server: Server
  connections: number
  requests: Array<{ url: string; headers: IncomingMessage['headers'] }>
}

let running: Running[] = []

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1'): Promise<Running> {
  const r: Running = { url: '', port: 0, server: createServer(), connections: 0, requests: [] }
  r.server.on('connection', () => r.connections++)
  r.server.on('request', (req, res) => {
    r.requests.push({ url: req.url!, headers: req.headers })
    handle(req, res)
  })
  await new Promise<void>((done) => r.server.listen(0, host, done))
  r.port = (r.server.address() as AddressInfo).port
  r.url = `http://127.0.0.1:${r.port}`
  running.push(r)
  return r
}

const ok = (_req: IncomingMessage, res: ServerResponse): void => void res.end('ok')

Policy.after.each(async () => {
  delete process.env.TEA_SERVE_LISTENER
  for (const r of running) {
    r.server.closeAllConnections()
    await new Promise((done) => r.server.close(done))
  }
  running = []
})

const get = async (url: string, allow: string[] = [], headers: Record<string, string> = {}): Promise<string> =>
  (await httpFetch(url, { policy: destinationPolicy(allow), headers, signal: AbortSignal.timeout(5000) })).text()

Policy('H: loopback, unspecified, link-local and metadata addresses are refused in every spelling, before any connection', async () => {
  const s = await serve(ok)
  const p = s.port
  const forms = [
    [`http://127.0.0.1:${p}/`, 'loopback'],
    [`http://localhost:${p}/`, 'loopback'],
    [`http://2130706433:${p}/`, 'loopback'],
    [`http://0x7f.1:${p}/`, 'loopback'],
    [`http://127.1:${p}/`, 'loopback'],
    [`http://0177.0.0.1:${p}/`, 'loopback'],
    [`http://127.0.0.2:${p}/`, 'loopback'],
    [`http://[::1]:${p}/`, 'loopback'],
    [`http://[::ffff:7f00:1]:${p}/`, 'loopback'],
    [`http://[::ffff:127.0.0.1]:${p}/`, 'loopback'],
    [`http://[::7f00:1]:${p}/`, 'loopback'],
    [`http://[64:ff9b::7f00:1]:${p}/`, 'loopback'],
    [`http://0.0.0.0:${p}/`, 'unspecified'],
    [`http://0:${p}/`, 'unspecified'],
    [`http://[::]:${p}/`, 'unspecified'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'link-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://100.100.100.200/latest/meta-data/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    [`https://127.0.0.1:${p}/`, 'loopback'],
    [`https://localhost:${p}/`, 'loopback'],
  ] as const
  for (const [url, why] of forms) {
    const e = await rejection(get(url))
    assert.ok(isTeaError(e, 'HTTP_DESTINATION_DENIED'), `${url}: ${e}`)
    assert.match(e.message, why, url)
    assert.match(e.message, 'settings.http.allow', url)
  }
  assert.is(s.connections, 0)
})

Policy("H: a name is refused by the address it resolves to, and the message names both and the setting's fix", async () => {
  const s = await serve(ok)
  const e = await rejection(get(`http://localhost:${s.port}/x`))
  assert.ok(isTeaError(e, 'HTTP_DESTINATION_DENIED'))
  assert.match(e.message, /^localhost \(resolved to (127\.0\.0\.1|::1)\) is a loopback address/)
  assert.match(e.hint ?? '', 'add "localhost" (this name, whatever it resolves to) or "')
  assert.equal([e.details?.host, e.details?.port], ['localhost', s.port])
  assert.is(s.connections, 0)
})

Policy("an address of this machine's own is refused like loopback", async () => {
  const own = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)
  if (!own) return // a machine with loopback only: nothing more to check
  await rejects(get(`http://${own.address}:9/`), 'HTTP_DESTINATION_DENIED', "an address of this machine's own")
})

Policy('settings.http.allow: a host allows that host only; a CIDR allows whatever resolves into it', async () => {
  const s = await serve(ok)
  assert.is(await get(`${s.url}/`, ['127.0.0.1']), 'ok')
  assert.is(await get(`http://2130706433:${s.port}/`, ['127.0.0.1']), 'ok', 'the URL parser makes it the same host')
  await rejects(get(`http://localhost:${s.port}/`, ['127.0.0.1']), 'HTTP_DESTINATION_DENIED', 'localhost')
  assert.is(await get(`http://localhost:${s.port}/`, ['localhost']), 'ok')
  assert.is(await get(`http://LocalHost:${s.port}/`, ['localhost.']), 'ok', 'case and a trailing dot do not make another host')
  assert.is(await get(`http://localhost:${s.port}/`, ['127.0.0.0/8', '::1/128']), 'ok')
  assert.is(await get(`http://[::ffff:7f00:1]:${s.port}/`, ['127.0.0.1/32']), 'ok', 'an IPv4 range covers the IPv4-mapped form')
  await rejects(get(`${s.url}/`, ['10.0.0.0/8', 'example.org']), 'HTTP_DESTINATION_DENIED', 'loopback')
})

Policy('allow entries are checked: a name, an address or a CIDR, nothing else', () => {
  for (const good of ['localhost', 'printer.lan', '192.168.1.20', '::1', '[::1]', '10.0.0.0/8', 'fd00::/8'])
    assert.is(allowEntryProblem(good), undefined, good)
  for (const bad of ['http://x', 'x:80', '10.0.0.0/33', 'a b', '*.lan', '', '1.2.3.4/x']) assert.type(allowEntryProblem(bad), 'string', bad)
})

Policy('H: every redirect hop is checked again: a page on an allowed host cannot send the request to loopback', async () => {
  const inner = await serve((_req, res) => res.end('secret'))
  const outer = await serve((_req, res) => res.writeHead(302, { location: `http://localhost:${inner.port}/api/runs/s1` }).end())
  const e = await rejection(get(`${outer.url}/page`, ['127.0.0.1']))
  assert.ok(isTeaError(e, 'HTTP_DESTINATION_DENIED'), String(e))
  assert.match(e.message, 'localhost (resolved to')
  assert.is(outer.requests.length, 1)
  assert.is(inner.connections, 0)
  // A redirect to an address spelled in the Location, or to another scheme, is refused the same way.
  const toAddress = await serve((_req, res) => res.writeHead(307, { location: 'http://0x7f.0.0.2:9/' }).end())
  await rejects(get(`${toAddress.url}/`, ['127.0.0.1']), 'HTTP_DESTINATION_DENIED', '127.0.0.2 is a loopback address')
  const toFile = await serve((_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end())
  await rejects(get(`${toFile.url}/`, ['127.0.0.1']), 'HTTP_DESTINATION_DENIED', 'file: URLs are not fetched')
})

Policy('at most 5 redirects: the 6th is HTTP_REDIRECT_LIMIT, and it is not followed', async () => {
  const s = await serve((req, res) => {
    const n = Number(req.url!.slice(1))
    if (n > 0) res.writeHead(302, { location: `/${n - 1}` })
    res.end(`at ${n}`)
  })
  assert.is(await get(`${s.url}/5`, ['127.0.0.1']), 'at 0')
  s.requests.length = 0
  const e = await rejection(get(`${s.url}/6`, ['127.0.0.1']))
  assert.ok(isTeaError(e, 'HTTP_REDIRECT_LIMIT'), String(e))
  assert.match(e.message, `${s.url}/1 redirected to ${s.url}/0 after 5 redirects`)
  assert.equal(
    s.requests.map((r) => r.url),
    ['/6', '/5', '/4', '/3', '/2', '/1'],
  )
})

Policy('a redirect to another origin drops Cookie, Authorization and Proxy-Authorization; one to the same origin keeps them', async () => {
  const other = await serve(ok)
  const s = await serve((req, res) => {
    if (req.url === '/away') res.writeHead(302, { location: `http://localhost:${other.port}/x` })
    else if (req.url === '/home') res.writeHead(302, { location: '/here' })
    res.end('ok')
  })
  const secrets = { cookie: 'session=s3', authorization: 'Bearer t0k', 'proxy-authorization': 'Basic cA==', 'x-kept': '1' }
  await get(`${s.url}/away`, ['127.0.0.1', 'localhost'], secrets)
  const seen = other.requests[0]!.headers
  assert.equal([seen.cookie, seen.authorization, seen['proxy-authorization'], seen['x-kept']], [undefined, undefined, undefined, '1'])
  await get(`${s.url}/home`, ['127.0.0.1'], secrets)
  const kept = s.requests.find((r) => r.url === '/here')!.headers
  assert.equal([kept.cookie, kept.authorization, kept['proxy-authorization']], ['session=s3', 'Bearer t0k', 'Basic cA=='])
})

Policy("H: tea serve's own listener is refused whatever settings.http.allow says", async () => {
  const s = await serve(ok)
  markServeListener('127.0.0.1', s.port)
  for (const allow of [['127.0.0.1'], ['localhost'], ['127.0.0.0/8', '::1/128']]) {
    const host = allow[0] === 'localhost' ? 'localhost' : '127.0.0.1'
    await rejects(get(`http://${host}:${s.port}/api/runs`, allow), 'HTTP_DESTINATION_DENIED', "tea serve's own listener")
  }
  assert.is(s.connections, 0)
  // Another port of the same host is the allow list's to open.
  const other = await serve(ok)
  assert.is(await get(`${other.url}/`, ['127.0.0.1']), 'ok')
})

Policy("a connection kept alive under one agent's policy is not reused by a policy that refuses its host", async () => {
  const s = await serve(ok)
  assert.is(await get(`http://localhost:${s.port}/`, ['localhost']), 'ok')
  await rejects(get(`http://localhost:${s.port}/`, []), 'HTTP_DESTINATION_DENIED', 'localhost')
  assert.is(await get(`http://localhost:${s.port}/`, ['localhost']), 'ok')
  assert.is(s.connections, 1, 'the allowed policy reused its own connection')
})

Policy('without a policy (model servers) nothing is checked: loopback is reached as before', async () => {
  const s = await serve(ok)
  assert.is(await (await httpFetch(`http://localhost:${s.port}/`)).text(), 'ok')
})

Policy.run()
