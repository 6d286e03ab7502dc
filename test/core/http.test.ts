import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { httpFetch, replyWith } from '../../src/core/http.ts'
import { waitFor } from '../support/wait.ts'

const Http = suite('httpFetch: fetch for http: URLs over node:http')

interface Running {
  url: string
  server: Server
  connections: number
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }>
}

let running: Running[] = []

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Running> {
  const r: Running = { url: '', server: createServer(), connections: 0, requests: [] }
  r.server.on('connection', () => r.connections++)
  r.server.on('request', (req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      r.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body })
      handle(req, res)
    })
  })
  await new Promise<void>((done) => r.server.listen(0, '127.0.0.1', done))
  r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}`
  running.push(r)
  return r
}

Http.after.each(async () => {
  for (const r of running) {
    r.server.closeAllConnections()
    await new Promise((done) => r.server.close(done))
  }
  running = []
})

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('expected a rejection')
}

Http('a POST sends its method, headers and body; the reply has status, headers, text and json as fetch has', async () => {
  const s = await serve((_req, res) => {
    res.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-two': ['a', 'b'] })
    res.end('{"ok":true}')
  })
  const reply = await httpFetch(`${s.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mine': '1' },
    body: '{"model":"m"}',
  })
  assert.is(reply.ok, true)
  assert.is(reply.status, 201)
  assert.is(reply.statusText, 'Made')
  assert.is(reply.headers.get('Content-Type'), 'application/json')
  assert.is(reply.headers.get('x-two'), 'a, b')
  assert.is(reply.headers.get('x-absent'), null)
  assert.equal(await reply.json(), { ok: true })
  assert.equal(s.requests[0]!.method, 'POST')
  assert.is(s.requests[0]!.url, '/api/chat')
  assert.is(s.requests[0]!.headers['x-mine'], '1')
  assert.is(s.requests[0]!.body, '{"model":"m"}')
})

Http('an error status is a reply, not ok, with its body readable', async () => {
  const s = await serve((_req, res) => {
    res.writeHead(503, { 'retry-after': '2' })
    res.end('busy')
  })
  const reply = await httpFetch(`${s.url}/x`)
  assert.is(reply.ok, false)
  assert.is(reply.status, 503)
  assert.is(reply.headers.get('retry-after'), '2')
  assert.is(await reply.text(), 'busy')
})

Http('a streamed body arrives chunk by chunk through a web ReadableStream, whole, past its buffer', async () => {
  const line = `${JSON.stringify({ message: { content: 'x'.repeat(1000) }, done: false })}\n`
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    let n = 0
    const more = (): void => {
      while (n < 3000) {
        n++
        if (!res.write(line)) return void res.once('drain', more)
      }
      res.end('{"done":true}\n')
    }
    more()
  })
  const reply = await httpFetch(`${s.url}/stream`)
  const reader = reply.body!.getReader()
  let bytes = 0
  let chunks = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.length
    chunks++
    if (chunks % 50 === 0) await new Promise((r) => setTimeout(r, 1)) // a slow reader: the socket is paused meanwhile
  }
  assert.is(bytes, 3000 * Buffer.byteLength(line) + '{"done":true}\n'.length)
  assert.ok(chunks > 1, 'one chunk: the body was not streamed')
})

Http('a request that cannot be made rejects as fetch does: TypeError "fetch failed" with the socket error as cause', async () => {
  const s = await serve(() => {})
  const url = s.url
  await new Promise((done) => s.server.close(done))
  running = []
  const e = (await rejection(httpFetch(`${url}/api/ps`))) as TypeError & { cause?: { code?: string } }
  assert.instance(e, TypeError)
  assert.is(e.message, 'fetch failed')
  assert.is(e.cause?.code, 'ECONNREFUSED')
})

Http('a connection closed in the middle of the body errors the stream with TypeError "terminated"', async () => {
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-length': '1000' })
    res.write('only part of it')
    setTimeout(() => res.socket?.destroy(), 20)
  })
  const reply = await httpFetch(`${s.url}/cut`)
  const e = (await rejection(reply.text())) as TypeError & { cause?: { code?: string } }
  assert.instance(e, TypeError)
  assert.is(e.message, 'terminated')
  assert.is(e.cause?.code, 'ECONNRESET')
})

Http("an abort before the reply rejects with the signal's reason; one already fired sends nothing", async () => {
  const s = await serve(() => {}) // never answers
  const controller = new AbortController()
  const pending = httpFetch(`${s.url}/slow`, { signal: controller.signal })
  setTimeout(() => controller.abort(new Error('timed out after 10 ms')), 10)
  const e = (await rejection(pending)) as Error
  assert.is(e.message, 'timed out after 10 ms')
  const before = s.requests.length
  const early = (await rejection(httpFetch(`${s.url}/x`, { signal: AbortSignal.abort() }))) as Error
  assert.is(early.name, 'AbortError')
  assert.is(s.requests.length, before)
})

Http("an abort in the middle of the body errors the stream with the signal's reason and closes the connection", async () => {
  let closed = false
  const s = await serve((_req, res) => {
    res.writeHead(200)
    res.write('first')
    res.on('close', () => (closed = true))
  })
  const controller = new AbortController()
  const reply = await httpFetch(`${s.url}/long`, { signal: controller.signal })
  const reader = reply.body!.getReader()
  assert.is(Buffer.from((await reader.read()).value!).toString(), 'first')
  controller.abort(new Error('the attempt is over'))
  const e = (await rejection(reader.read())) as Error
  assert.is(e.message, 'the attempt is over')
  await waitFor(() => closed, 'the server to see the connection closed (it still holds it)')
})

Http('cancelling the body closes the connection; a body read to its end leaves it for the next request', async () => {
  let closed = 0
  const s = await serve((req, res) => {
    res.on('close', () => closed++)
    if (req.url === '/endless') {
      res.writeHead(200)
      res.write('a')
      return
    }
    res.end('done')
  })
  assert.is(await (await httpFetch(`${s.url}/one`)).text(), 'done')
  assert.is(await (await httpFetch(`${s.url}/two`)).text(), 'done')
  assert.is(s.connections, 1, 'the second request opened a connection of its own')
  const endless = await httpFetch(`${s.url}/endless`)
  await endless.body!.cancel()
  await waitFor(() => closed >= 1, 'the server to see the connection of the cancelled body closed')
})

Http("a URL that is not http: goes to Node's fetch (here a data: URL, which node:http cannot open)", async () => {
  const reply = await httpFetch('data:text/plain,hello%20there')
  assert.is(reply.ok, true)
  assert.is(await reply.text(), 'hello there')
})

Http('replyWith makes a reply of text or of a stream, with the status and headers of another', async () => {
  const from = {
    status: 200,
    statusText: 'OK',
    url: 'http://x/',
    headers: { get: (n: string) => (n === 'a' ? 'b' : null), entries: () => [] },
  }
  const text = replyWith('{"x":1}', from)
  assert.equal(await text.json(), { x: 1 })
  assert.is(text.headers.get('a'), 'b')
  const stream = replyWith(
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('s'))
        c.close()
      },
    }),
    from,
  )
  assert.is(await stream.text(), 's')
  assert.is(stream.ok, true)
  assert.is(replyWith('', { ...from, status: 404 }).ok, false)
})

Http('sends what fetch sends by default, unless the request says otherwise; header names go lower-cased', async () => {
  const s = await serve((_req, res) => res.end('ok'))
  await (await httpFetch(`${s.url}/`)).text()
  await (await httpFetch(`${s.url}/`, { headers: { 'User-Agent': 'mine', Accept: 'application/json' } })).text()
  const [plain, own] = s.requests
  assert.is(plain!.headers.accept, '*/*')
  assert.is(plain!.headers['accept-language'], '*')
  assert.is(plain!.headers['sec-fetch-mode'], 'cors')
  assert.is(plain!.headers['user-agent'], 'node')
  assert.is(plain!.headers['accept-encoding'], 'gzip, deflate')
  assert.is(own!.headers['user-agent'], 'mine')
  assert.is(own!.headers.accept, 'application/json')
})

Http('a gzip or deflate body arrives decoded, as fetch decodes it', async () => {
  const { gzipSync, deflateSync } = await import('node:zlib')
  const text = 'the opening hours are 9 to 5 '.repeat(200)
  const s = await serve((req, res) => {
    const gz = req.url === '/gz'
    res.writeHead(200, { 'content-encoding': gz ? 'gzip' : 'deflate' })
    res.end(gz ? gzipSync(text) : deflateSync(text))
  })
  assert.is(await (await httpFetch(`${s.url}/gz`)).text(), text)
  assert.is(await (await httpFetch(`${s.url}/deflate`)).text(), text)
})

Http(
  'redirects are followed as fetch follows them: the URL after them, 303 and a POST on 301/302 become a GET, 307 keeps the body',
  async () => {
    const s = await serve((req, res) => {
      const to: Record<string, [number, string]> = { '/a': [302, '/b'], '/b': [301, '/end'], '/see': [303, '/end'], '/keep': [307, '/end'] }
      const hop = to[req.url!]
      if (hop) {
        res.writeHead(hop[0], { location: hop[1] })
        return res.end()
      }
      res.end(`${req.method} ${req.url}`)
    })
    const chained = await httpFetch(`${s.url}/a`)
    assert.is(await chained.text(), 'GET /end')
    assert.is(chained.url, `${s.url}/end`)
    assert.is(
      await (await httpFetch(`${s.url}/a`, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } })).text(),
      'GET /end',
    )
    assert.is(await (await httpFetch(`${s.url}/see`, { method: 'POST', body: 'x' })).text(), 'GET /end')
    assert.is(await (await httpFetch(`${s.url}/keep`, { method: 'POST', body: 'kept' })).text(), 'POST /end')
    const posts = s.requests.filter((r) => r.url === '/end' && r.method === 'POST')
    assert.is(posts.length, 1)
    assert.is(posts[0]!.body, 'kept')
    const afterPost = s.requests.find((r) => r.url === '/b' && r.method === 'GET' && r.headers['content-type'] === undefined)
    assert.ok(afterPost, 'a POST turned into a GET kept its body headers')
  },
)

Http(
  'a redirect to another origin drops authorization, cookie and proxy-authorization, as fetch does; one to itself keeps them; more than 20 fail as fetch fails',
  async () => {
    const other = await serve((req, res) =>
      res.end(String([req.headers.authorization, req.headers.cookie, req.headers['proxy-authorization']])),
    )
    const s = await serve((req, res) => {
      if (req.url === '/away') res.writeHead(302, { location: `${other.url}/x` })
      else if (req.url === '/home') res.writeHead(302, { location: '/here' })
      else if (req.url === '/loop') res.writeHead(302, { location: '/loop' })
      else return res.end(String(req.headers.authorization))
      res.end()
    })
    const auth = { authorization: 'Bearer secret' }
    assert.is(await (await httpFetch(`${s.url}/away`, { headers: { ...auth, cookie: 'a=1', 'proxy-authorization': 'x' } })).text(), ',,')
    assert.is(await (await httpFetch(`${s.url}/home`, { headers: auth })).text(), 'Bearer secret')
    const e = (await rejection(httpFetch(`${s.url}/loop`))) as TypeError
    assert.instance(e, TypeError)
    assert.is(e.message, 'fetch failed')
    assert.is(s.requests.filter((r) => r.url === '/loop').length, 21)
  },
)

Http('response headers list sorted by name, as Headers iterates them, repeated ones joined', async () => {
  const s = await serve((_req, res) => {
    res.setHeader('x-b', '2')
    res.setHeader('set-cookie', ['a=1', 'b=2'])
    res.setHeader('x-a', '1')
    res.end()
  })
  const reply = await httpFetch(`${s.url}/`)
  const entries = [...reply.headers.entries()].filter(([k]) => k.startsWith('x-') || k === 'set-cookie')
  assert.equal(entries, [
    ['set-cookie', 'a=1, b=2'],
    ['x-a', '1'],
    ['x-b', '2'],
  ])
})

Http.run()
