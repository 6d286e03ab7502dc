/**
 * `httpFetch`: fetch for `http:` URLs (a local model server, a sensor, a service on the same board) made over
 * `node:http`, and Node's own fetch for any other URL. Model calls and the `http.*`/`web.scrape` actions use it.
 *
 * Why not fetch for all: Node's fetch is undici, about 1 MB of JavaScript and a WASM parser, which Node compiles at
 * a process's first request: ~20 ms with Node's cache of its built-ins, ~33 ms inside the executables before their
 * loader let that cache apply (src/core/builtin.ts). A board starts tea once per task, so every run of an agent
 * that called a model paid it before its first request went out (a one-call agent: 140 ms from the x64 executable
 * with fetch, 57 without; issue 14, bench/RESULTS.md).
 *
 * It does what fetch does where tea and its dependencies can tell: the same request headers by default (`accept`,
 * `accept-language`, `sec-fetch-mode`, `user-agent: node`, `accept-encoding: gzip, deflate`, each unless given),
 * a gzip or deflate body decoded, up to 20 redirects followed (303, and 301/302 after a POST, become a GET without
 * a body; `authorization`, `cookie` and `proxy-authorization` are dropped when the redirect leaves the origin, as
 * fetch drops them; one to `https:` goes on through fetch),
 * and a reply with what is read of a Response: `ok`, `status`, `statusText`, `url` (after redirects), `headers`
 * (`get`, and `entries` sorted by name as Headers iterates), `body` (a web ReadableStream, read with
 * backpressure), `text()` and `json()`. Failures look as fetch's do: a request that cannot be made rejects with
 * `TypeError('fetch failed', { cause })`, a body cut short errors with `TypeError('terminated', { cause })`, and an
 * abort rejects the request, or errors the body, with the signal's reason. Connections are kept alive between
 * requests by Node's global agent, which lets an idle one go when the process has nothing else to do.
 *
 * With a destination policy (`policy`, http-policy.ts: what the agent-directed `http.*` and `web.scrape` pass; model
 * calls pass none) every hop, https included, is made here over `node:http`/`node:https` instead, since fetch
 * would follow redirects and resolve names where no check can see them: each hop's address is checked (by the
 * lookup its socket connects with), at most `policy.maxRedirects` redirects are followed and one more fails with
 * HTTP_REDIRECT_LIMIT, and the policy's own agent keeps its connections.
 */

import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import { builtin, withNodeCache } from './builtin.ts'
import { isTeaError, TeaError } from './errors.ts'
import { type DestinationPolicy, shownUrl } from './http-policy.ts'
import { once } from './util.ts'

export interface HttpRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
  signal?: AbortSignal
  /** Where the request may go (http-policy.ts); without one, anywhere. */
  policy?: DestinationPolicy
}

export interface HttpReply {
  ok: boolean
  status: number
  statusText: string
  /** The URL that answered, after redirects. */
  url: string
  headers: { get(name: string): string | null; entries(): Iterable<[string, string]> }
  body: ReadableStream<Uint8Array> | null
  text(): Promise<string>
  json(): Promise<unknown>
}

/** The web streams a reply is read through, loaded (with Node's cache) before the first reply needs them. */
function webStreams(): void {
  void ReadableStream
  void TransformStream
}

/** `node:http` and the web streams, loaded at the first request, with Node's cache. */
const nodeHttp = once(() => withNodeCache(() => (webStreams(), builtin('node:http'))))

/** `node:https`, only for requests under a destination policy (every other https URL goes to Node's fetch). */
const nodeHttps = once(() => withNodeCache(() => (webStreams(), builtin('node:https'))))

let fetchLoaded = false

/**
 * Node's fetch. Its first call loads undici (~1 MB of Node's JavaScript, with tls, http2, zlib and more under it):
 * made with Node's cache, as `nodeHttp` is.
 */
function nodeFetch(target: URL, init: RequestInit): Promise<Response> {
  if (fetchLoaded) return fetch(target, init)
  fetchLoaded = true
  return withNodeCache(() => fetch(target, init))
}

/** What Node's fetch sends unless the request says otherwise (as Node 24's undici does). */
const FETCH_HEADERS: Record<string, string> = {
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
  'accept-encoding': 'gzip, deflate',
}

const MAX_REDIRECTS = 20

export async function httpFetch(url: string | URL, init: HttpRequest = {}): Promise<HttpReply> {
  let target = typeof url === 'string' ? new URL(url) : new URL(url.href)
  let { method = 'GET', body } = init
  let headers = lowerCased(init.headers)
  const { policy } = init
  for (let redirects = 0; ; redirects++) {
    policy?.check(target)
    // Node's fetch adds its own defaults.
    if (!policy && target.protocol !== 'http:') return nodeFetch(target, { ...init, method, headers, body }) as Promise<HttpReply>
    const res = await exchange(target, method, { ...FETCH_HEADERS, ...headers }, body, init.signal, policy)
    const location = res.headers.location
    if (!REDIRECTS.has(res.statusCode ?? 0) || location === undefined) return replyOf(res, target, init.signal)
    res.destroy() // its body is not wanted: the connection goes rather than wait for it
    const next = new URL(location, target)
    if (policy && redirects === policy.maxRedirects) {
      throw new TeaError(
        'HTTP_REDIRECT_LIMIT',
        `${shownUrl(target)} redirected to ${shownUrl(next)} after ${redirects} redirects already followed; at most ${policy.maxRedirects} are`,
        { details: { url: shownUrl(target), location: shownUrl(next), max_redirects: policy.maxRedirects } },
      )
    }
    if (redirects === MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') })
    if ((res.statusCode === 303 && method !== 'HEAD') || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
      method = 'GET'
      body = undefined
      headers = without(headers, ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'])
    }
    // What fetch drops too: another origin must not receive this one's credentials.
    if (next.origin !== target.origin) headers = without(headers, ['authorization', 'cookie', 'proxy-authorization'])
    target = next
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** Sends one request; resolves with the response head (its body still to read), or rejects as fetch does. */
function exchange(
  target: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal | undefined,
  policy: DestinationPolicy | undefined,
): Promise<IncomingMessage> {
  if (signal?.aborted) return Promise.reject(abortReason(signal))
  return new Promise((resolve, reject) => {
    const req = policy
      ? (target.protocol === 'https:' ? nodeHttps() : nodeHttp()).request(target, {
          method,
          headers,
          agent: policy.agent(target),
          lookup: policy.lookup(target),
        })
      : nodeHttp().request(target, { method, headers })
    let res: IncomingMessage | undefined
    const onAbort = (): void => {
      // Before the head: the request rejects; after it, the body errors (replyOf). Either way the socket goes.
      req.destroy(abortReason(signal!))
      res?.destroy(abortReason(signal!))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    req.on('error', (e) => {
      if (res) return // the body reports it
      signal?.removeEventListener('abort', onAbort)
      // The policy's refusal (from the lookup) is the caller's answer, not a network failure.
      reject(signal?.aborted ? abortReason(signal) : isTeaError(e) ? e : new TypeError('fetch failed', { cause: e }))
    })
    req.on('response', (r) => {
      res = r
      // The listener goes once the body has ended, failed or been cancelled, whoever reads it.
      r.once('close', () => signal?.removeEventListener('abort', onAbort))
      resolve(r)
    })
    req.end(body)
  })
}

/** A reply made from text already read, with the status, URL and headers of another. */
export function replyWith(
  body: string | ReadableStream<Uint8Array>,
  from: Pick<HttpReply, 'status' | 'statusText' | 'url' | 'headers'>,
): HttpReply {
  const stream = typeof body === 'string' ? streamOf(body) : body
  return reply(from.status, from.statusText, from.url, from.headers, stream)
}

// --- internal ---

function replyOf(res: IncomingMessage, url: URL, signal: AbortSignal | undefined): HttpReply {
  const headers = {
    get(name: string): string | null {
      const v = res.headers[name.toLowerCase()]
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v
    },
    entries(): Iterable<[string, string]> {
      return Object.keys(res.headers)
        .sort()
        .map((name): [string, string] => [name, headers.get(name)!])
    },
  }
  const source = decoded(res)
  let ended = false
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        source.on('data', (chunk: Buffer) => {
          if (ended) return // cancelled: what was already buffered still arrives
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length))
          if ((controller.desiredSize ?? 1) <= 0) source.pause()
        })
        source.on('end', () => {
          if (ended) return
          ended = true
          controller.close()
        })
        // The socket closed before the body's end (Node says "aborted", ECONNRESET), a compressed body was bad, or
        // we destroyed it.
        const failed = (e: Error): void => {
          if (ended) return
          ended = true
          controller.error(signal?.aborted ? abortReason(signal) : new TypeError('terminated', { cause: e }))
        }
        res.on('error', failed)
        if (source !== res) source.on('error', failed)
      },
      pull() {
        source.resume()
      },
      cancel() {
        ended = true
        res.destroy()
      },
    },
    { highWaterMark: 4 },
  )
  return reply(res.statusCode ?? 0, res.statusMessage ?? '', url.href, headers, body)
}

/** The body as sent, or decoded when it came gzip or deflate encoded (fetch asks for both, and decodes them). */
function decoded(res: IncomingMessage): Readable {
  const encoding = res.headers['content-encoding']?.trim().toLowerCase()
  if (encoding !== 'gzip' && encoding !== 'x-gzip' && encoding !== 'deflate') return res
  const zlib = builtin('node:zlib')
  return res.pipe(encoding === 'deflate' ? zlib.createInflate() : zlib.createGunzip())
}

function reply(
  status: number,
  statusText: string,
  url: string,
  headers: HttpReply['headers'],
  body: ReadableStream<Uint8Array>,
): HttpReply {
  const text = async (): Promise<string> => {
    const chunks: Uint8Array[] = []
    const reader = body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return Buffer.concat(chunks).toString('utf8')
      chunks.push(value)
    }
  }
  return { ok: status >= 200 && status < 300, status, statusText, url, headers, body, text, json: async () => JSON.parse(await text()) }
}

function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8')
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.length > 0) controller.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length))
      controller.close()
    },
  })
}

/** The request's headers, names lower-cased as fetch sends them. */
function lowerCased(given: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(given ?? {})) out[name.toLowerCase()] = value
  return out
}

function without(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  const out = { ...headers }
  for (const name of names) delete out[name]
  return out
}

/** What fetch rejects with on an abort: the signal's reason, or an AbortError when it has none. */
function abortReason(signal: AbortSignal): Error {
  return (signal.reason as Error | undefined) ?? new DOMException('This operation was aborted', 'AbortError')
}
