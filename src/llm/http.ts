/**
 * HTTP for model servers: `modelFetch` is fetch for `http:` URLs (a local Ollama, llama.cpp or vLLM server, the
 * case on a board) made over `node:http`, and Node's own fetch for any other URL.
 *
 * Why not fetch for all: Node's fetch is undici, about 1 MB of JavaScript and a WASM parser, which Node compiles at
 * a process's first request: ~20 ms here with Node's cache of its built-ins, ~33 ms inside the executables, whose
 * V8 flags make Node reject that cache (scripts/build/sea-build.mjs). A board starts tea once per task, so every
 * run of an agent that calls a model paid it before its first request went out; `node:http` is already loaded
 * when Node has started (issue 14, bench/RESULTS.md).
 *
 * A reply has what tea and the `ollama` client read of a fetch Response: `ok`, `status`, `statusText`,
 * `headers.get`, `body` (a web ReadableStream, read with backpressure), `text()` and `json()`. Failures look as
 * fetch's do, so `classifyFailure` reads both alike: a request that cannot be made rejects with
 * `TypeError('fetch failed', { cause })`, a body cut short errors with `TypeError('terminated', { cause })`, and an
 * abort rejects the request, or errors the body, with the signal's reason. Connections are kept alive between
 * calls by Node's global agent, which lets an idle one go when the process has nothing else to do.
 */

import type { IncomingMessage } from 'node:http'
import { builtin, withNodeCache } from '../core/builtin.ts'
import { once } from '../core/util.ts'

/** `node:http` and the web streams a reply is read through, loaded at the first request, with Node's cache. */
const nodeHttp = once(() =>
  withNodeCache(() => {
    void ReadableStream
    void TransformStream
    return builtin('node:http')
  }),
)

export interface ModelRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
  signal?: AbortSignal
}

export interface ModelReply {
  ok: boolean
  status: number
  statusText: string
  headers: { get(name: string): string | null }
  body: ReadableStream<Uint8Array> | null
  text(): Promise<string>
  json(): Promise<unknown>
}

export function modelFetch(url: string | URL, init: ModelRequest = {}): Promise<ModelReply> {
  const target = typeof url === 'string' ? new URL(url) : url
  if (target.protocol !== 'http:') return fetch(target, init)
  const { signal } = init
  if (signal?.aborted) return Promise.reject(abortReason(signal))
  return new Promise((resolve, reject) => {
    const req = nodeHttp().request(target, { method: init.method ?? 'GET', headers: init.headers })
    let res: IncomingMessage | undefined
    const onAbort = (): void => {
      // Before the head: the request rejects; after it, the body errors (replyOf). Either way the socket goes.
      req.destroy(abortReason(signal!))
      res?.destroy(abortReason(signal!))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    const done = (): void => signal?.removeEventListener('abort', onAbort)
    req.on('error', (e) => {
      if (res) return // the body reports it
      done()
      reject(signal?.aborted ? abortReason(signal) : new TypeError('fetch failed', { cause: e }))
    })
    req.on('response', (r) => {
      res = r
      resolve(replyOf(r, signal, done))
    })
    req.end(init.body)
  })
}

/** A reply made from text already read, with the status and headers of the one it came from. */
export function replyWith(
  body: string | ReadableStream<Uint8Array>,
  from: Pick<ModelReply, 'status' | 'statusText' | 'headers'>,
): ModelReply {
  const stream = typeof body === 'string' ? streamOf(body) : body
  return reply(from.status, from.statusText, from.headers, stream)
}

// --- internal ---

function replyOf(res: IncomingMessage, signal: AbortSignal | undefined, done: () => void): ModelReply {
  const headers = {
    get(name: string): string | null {
      const v = res.headers[name.toLowerCase()]
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v
    },
  }
  let ended = false
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        res.on('data', (chunk: Buffer) => {
          if (ended) return // cancelled: what was already buffered still arrives
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length))
          if ((controller.desiredSize ?? 1) <= 0) res.pause()
        })
        res.on('end', () => {
          if (ended) return
          ended = true
          done()
          controller.close()
        })
        // The socket closed before the body's end (Node says "aborted", ECONNRESET), or we destroyed it.
        res.on('error', (e) => {
          if (ended) return
          ended = true
          done()
          controller.error(signal?.aborted ? abortReason(signal) : new TypeError('terminated', { cause: e }))
        })
      },
      pull() {
        res.resume()
      },
      cancel() {
        ended = true
        done()
        res.destroy()
      },
    },
    { highWaterMark: 4 },
  )
  return reply(res.statusCode ?? 0, res.statusMessage ?? '', headers, body)
}

function reply(status: number, statusText: string, headers: ModelReply['headers'], body: ReadableStream<Uint8Array>): ModelReply {
  const text = async (): Promise<string> => {
    const chunks: Uint8Array[] = []
    const reader = body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return Buffer.concat(chunks).toString('utf8')
      chunks.push(value)
    }
  }
  return { ok: status >= 200 && status < 300, status, statusText, headers, body, text, json: async () => JSON.parse(await text()) }
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

/** What fetch rejects with on an abort: the signal's reason, or an AbortError when it has none. */
function abortReason(signal: AbortSignal): Error {
  return (signal.reason as Error | undefined) ?? new DOMException('This operation was aborted', 'AbortError')
}
