import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { toJsonSchema } from '@valibot/to-json-schema'
import { isTeaError } from '../../../src/core/errors.ts'
import { isControlSignal } from '../../../src/core/signals.ts'
import type { Action } from '../../../src/actions/types.ts'
import { httpActions } from '../../../src/actions/http/index.ts'
import { testContext, type TestContext } from '../context.ts'
import { rejection, rejects } from '../../support/expect.ts'

interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

interface Ctx {
  server: Server
  base: string
  seen: Seen[]
  ctx: TestContext
}

/** The routes the test server knows; each test reads what the server saw in `seen`. */
function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  const { pathname } = new URL(req.url ?? '/', 'http://x')
  if (pathname === '/json') {
    res.setHeader('content-type', 'application/json; charset=utf-8')
    res.end(JSON.stringify({ ok: true, echo: body }))
  } else if (pathname === '/text') {
    res.setHeader('content-type', 'text/plain')
    res.setHeader('x-custom', 'yes')
    res.end('hello')
  } else if (pathname === '/bad-json') {
    res.setHeader('content-type', 'application/json')
    res.end('{not json')
  } else if (pathname === '/missing') {
    res.statusCode = 404
    res.end('no such thing here ' + 'x'.repeat(500))
  } else if (pathname === '/big-declared') {
    res.setHeader('content-length', String(5000))
    res.end('y'.repeat(5000))
  } else if (pathname === '/big-chunked') {
    // No Content-Length: the cap must be enforced while reading.
    res.write('z'.repeat(3000))
    res.write('z'.repeat(3000))
    res.end()
  } else if (pathname === '/slow') {
    // Never answers; the client's timeout must fire. The server closes it when the suite ends.
  } else if (pathname === '/slow-body') {
    res.write('partial')
  } else {
    res.statusCode = 500
    res.end('unexpected path')
  }
}

const http = suite<Ctx>('http actions')

http.before(async (c) => {
  c.seen = []
  c.server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (d: Buffer) => chunks.push(d))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      c.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      route(req, res, body)
    })
  })
  await new Promise<void>((resolve) => c.server.listen(0, '127.0.0.1', resolve))
  c.base = `http://127.0.0.1:${(c.server.address() as AddressInfo).port}`
})

http.after(async (c) => {
  c.server.closeAllConnections()
  await new Promise<void>((resolve) => c.server.close(() => resolve()))
})

http.before.each((c) => {
  c.seen.length = 0
  // The test server is on loopback, which the destination policy refuses unless the agent allows it.
  c.ctx = testContext({ settings: { http_allow: ['127.0.0.1'] } })
})

http.after.each((c) => c.ctx.cleanup())

const byName = (name: string): Action => httpActions.find((a) => a.name === name)!

async function run(ctx: TestContext, name: string, params: unknown): Promise<Record<string, unknown>> {
  const action = byName(name)
  return (await action.run(v.parse(action.params, params), ctx)) as Record<string, unknown>
}

http('http.get returns status, lower-case headers and body, with query parameters added to the URL', async (c) => {
  const r = await run(c.ctx, 'http.get', {
    url: `${c.base}/text?a=1`,
    query: { b: 'two words', n: 3, f: false },
    headers: { 'X-Token': 'abc' },
  })
  assert.is(r.status, 200)
  assert.is(r.body, 'hello')
  assert.is((r.headers as Record<string, string>)['x-custom'], 'yes')
  assert.not.ok('json' in r)
  assert.is(c.seen[0]!.url, '/text?a=1&b=two+words&n=3&f=false')
  assert.is(c.seen[0]!.headers['x-token'], 'abc')
})

http('http.get parses a JSON response into json', async (c) => {
  const r = await run(c.ctx, 'http.get', { url: `${c.base}/json` })
  assert.equal(r.json, { ok: true, echo: '' })
})

http('a JSON content-type with an unparseable body still returns the body, without json', async (c) => {
  const r = await run(c.ctx, 'http.get', { url: `${c.base}/bad-json` })
  assert.is(r.body, '{not json')
  assert.not.ok('json' in r)
})

http('http.post sends json with a JSON content-type, and body as text', async (c) => {
  const r = await run(c.ctx, 'http.post', { url: `${c.base}/json`, json: { x: [1, 'a'] } })
  assert.equal(r.json, { ok: true, echo: '{"x":[1,"a"]}' })
  assert.is(c.seen[0]!.method, 'POST')
  assert.is(c.seen[0]!.headers['content-type'], 'application/json')
  await run(c.ctx, 'http.post', { url: `${c.base}/json`, body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  assert.is(c.seen[1]!.body, 'a=b')
  assert.is(c.seen[1]!.headers['content-type'], 'application/x-www-form-urlencoded')
})

http('an invalid header value is INVALID_PARAMS naming the header, without any request', async (c) => {
  await rejects(run(c.ctx, 'http.get', { url: `${c.base}/text`, headers: { 'x-bad': 'a\r\nInjected: 1' } }), 'INVALID_PARAMS', 'x-bad')
  assert.is(c.seen.length, 0)
})

http('http.post refuses body and json together with INVALID_PARAMS', async (c) => {
  await rejects(run(c.ctx, 'http.post', { url: `${c.base}/json`, body: 'a', json: {} }), 'INVALID_PARAMS', 'both')
  assert.is(c.seen.length, 0)
})

http('a non-2xx status is HTTP_ERROR with the status and a short excerpt of the body', async (c) => {
  const e = await rejection(run(c.ctx, 'http.get', { url: `${c.base}/missing` }))
  assert.ok(isTeaError(e, 'HTTP_ERROR'))
  assert.match(e.message, '404')
  assert.match(e.message, 'no such thing here')
  assert.ok(e.message.length < 400, 'the excerpt is short')
  assert.is(e.details?.status, 404)
})

http('fail_on_status false returns the non-2xx response instead', async (c) => {
  const r = await run(c.ctx, 'http.get', { url: `${c.base}/missing`, fail_on_status: false })
  assert.is(r.status, 404)
  assert.match(r.body as string, /^no such thing here/)
})

http('refuses file:// and ftp:// URLs with HTTP_ERROR naming the scheme, without any request', async (c) => {
  await rejects(run(c.ctx, 'http.get', { url: 'file:///etc/passwd' }), 'HTTP_ERROR', "scheme 'file'")
  await rejects(run(c.ctx, 'http.post', { url: 'ftp://127.0.0.1/x', body: 'x' }), 'HTTP_ERROR', "scheme 'ftp'")
  await rejects(run(c.ctx, 'http.get', { url: 'not a url' }), 'HTTP_ERROR', "'not a url'")
  assert.is(c.seen.length, 0)
})

http('an oversized response fails with HTTP_ERROR, declared or not', async (c) => {
  await rejects(run(c.ctx, 'http.get', { url: `${c.base}/big-declared`, max_bytes: 1000 }), 'HTTP_ERROR', 'max_bytes 1000', '5000 bytes')
  await rejects(run(c.ctx, 'http.get', { url: `${c.base}/big-chunked`, max_bytes: 4000 }), 'HTTP_ERROR', 'max_bytes 4000')
  const ok = await run(c.ctx, 'http.get', { url: `${c.base}/big-chunked`, max_bytes: 6000 })
  assert.is((ok.body as string).length, 6000)
})

http('a slow server fails with HTTP_TIMEOUT naming the URL and the seconds', async (c) => {
  await rejects(run(c.ctx, 'http.get', { url: `${c.base}/slow`, timeout: 0.2 }), 'HTTP_TIMEOUT', `${c.base}/slow`, '0.2 s')
  await rejects(run(c.ctx, 'http.get', { url: `${c.base}/slow-body`, timeout: 0.2 }), 'HTTP_TIMEOUT', '/slow-body')
})

http('cancelling the run aborts the call with a cancel signal, not an error', async (c) => {
  const pending = rejection(run(c.ctx, 'http.get', { url: `${c.base}/slow` }))
  setTimeout(() => c.ctx.abort(), 20)
  assert.ok(isControlSignal(await pending, 'cancel'))
})

http('a refused connection is HTTP_ERROR naming the URL', async (c) => {
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  await rejects(run(c.ctx, 'http.get', { url: `http://127.0.0.1:${port}/x` }), 'HTTP_ERROR', `127.0.0.1:${port}`)
})

http('credentials in the URL are sent as Basic authorization and never repeated in error messages', async (c) => {
  const e = await rejection(run(c.ctx, 'http.get', { url: `${c.base.replace('//', '//user:hunter2@')}/missing` }))
  assert.ok(isTeaError(e, 'HTTP_ERROR'))
  assert.not.match(e.message, 'hunter2')
  assert.not.match(JSON.stringify(e.toJSON()), 'hunter2')
  assert.is(c.seen[0]!.headers.authorization, `Basic ${Buffer.from('user:hunter2').toString('base64')}`)
})

http(
  'H: http.get and http.post refuse loopback by default with HTTP_DESTINATION_DENIED naming host, address and setting, sending nothing',
  async (c) => {
    const closed = testContext()
    try {
      const e = await rejection(run(closed, 'http.get', { url: `${c.base}/text` }))
      assert.ok(isTeaError(e, 'HTTP_DESTINATION_DENIED'))
      assert.match(e.message, `http.get: GET ${c.base}/text: 127.0.0.1 is a loopback address`)
      assert.match(e.message, 'settings.http.allow')
      assert.equal([e.details?.host, e.details?.address], ['127.0.0.1', '127.0.0.1'])
      await rejects(run(closed, 'http.post', { url: `${c.base}/json`, json: {} }), 'HTTP_DESTINATION_DENIED', '127.0.0.1')
      assert.is(c.seen.length, 0)
    } finally {
      closed.cleanup()
    }
  },
)

http('a bad settings.http.allow entry is AGENT_INVALID naming it', async (c) => {
  const bad = testContext({ settings: { http_allow: ['10.0.0.0/40'] } })
  try {
    await rejects(run(bad, 'http.get', { url: `${c.base}/text` }), 'AGENT_INVALID', 'settings.http.allow[0]', '10.0.0.0/40')
    assert.is(c.seen.length, 0)
  } finally {
    bad.cleanup()
  }
})

http('every action has a one-sentence description and params convertible to a described JSON Schema', () => {
  assert.equal(
    httpActions.map((a) => a.name),
    ['http.get', 'http.post'],
  )
  for (const action of httpActions) {
    assert.match(action.description, /^[A-Z][^]*\.$/)
    const schema = toJsonSchema(action.params) as { properties: Record<string, { description?: string }> }
    for (const [key, prop] of Object.entries(schema.properties)) assert.ok(prop.description, `${action.name}.${key}`)
  }
})

http.run()
