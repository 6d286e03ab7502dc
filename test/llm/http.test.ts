import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { modelFetch, replyWith } from '../../src/llm/http.ts'

const Http = suite('modelFetch: fetch for model servers over node:http')

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
  const reply = await modelFetch(`${s.url}/api/chat`, {
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
  const reply = await modelFetch(`${s.url}/x`)
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
  const reply = await modelFetch(`${s.url}/stream`)
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
  const e = (await rejection(modelFetch(`${url}/api/ps`))) as TypeError & { cause?: { code?: string } }
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
  const reply = await modelFetch(`${s.url}/cut`)
  const e = (await rejection(reply.text())) as TypeError & { cause?: { code?: string } }
  assert.instance(e, TypeError)
  assert.is(e.message, 'terminated')
  assert.is(e.cause?.code, 'ECONNRESET')
})

Http("an abort before the reply rejects with the signal's reason; one already fired sends nothing", async () => {
  const s = await serve(() => {}) // never answers
  const controller = new AbortController()
  const pending = modelFetch(`${s.url}/slow`, { signal: controller.signal })
  setTimeout(() => controller.abort(new Error('timed out after 10 ms')), 10)
  const e = (await rejection(pending)) as Error
  assert.is(e.message, 'timed out after 10 ms')
  const before = s.requests.length
  const early = (await rejection(modelFetch(`${s.url}/x`, { signal: AbortSignal.abort() }))) as Error
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
  const reply = await modelFetch(`${s.url}/long`, { signal: controller.signal })
  const reader = reply.body!.getReader()
  assert.is(Buffer.from((await reader.read()).value!).toString(), 'first')
  controller.abort(new Error('the attempt is over'))
  const e = (await rejection(reader.read())) as Error
  assert.is(e.message, 'the attempt is over')
  await new Promise((r) => setTimeout(r, 50))
  assert.ok(closed, 'the server still holds the connection')
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
  assert.is(await (await modelFetch(`${s.url}/one`)).text(), 'done')
  assert.is(await (await modelFetch(`${s.url}/two`)).text(), 'done')
  assert.is(s.connections, 1, 'the second request opened a connection of its own')
  const endless = await modelFetch(`${s.url}/endless`)
  await endless.body!.cancel()
  await new Promise((r) => setTimeout(r, 50))
  assert.ok(closed >= 1)
})

Http("a URL that is not http: goes to Node's fetch (here a data: URL, which node:http cannot open)", async () => {
  const reply = await modelFetch('data:text/plain,hello%20there')
  assert.is(reply.ok, true)
  assert.is(await reply.text(), 'hello there')
})

Http('replyWith makes a reply of text or of a stream, with the status and headers of another', async () => {
  const from = { status: 200, statusText: 'OK', headers: { get: (n: string) => (n === 'a' ? 'b' : null) } }
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

Http.run()
