/**
 * A scripted model server for tests: a real HTTP server on 127.0.0.1 speaking Ollama's API (`/api/chat`,
 * `/api/generate` — JSON or streamed NDJSON — `/api/tags`, `/api/version`) and OpenAI's `/v1/chat/completions`
 * (JSON or SSE), so code under test goes through the real client libraries. Embeddings (`/api/embed`,
 * `/v1/embeddings`) are answered, unscripted, with a small vector derived from each input text (`fakeEmbedding`).
 *
 * Each chat/generate request takes the first queued step whose `match` (if any) occurs in its messages; a step
 * without `repeat` is used once. A step is one of:
 *   {content: "text" | {…JSON…} | (req) => "text", tokens?, tokenDelayMs?, usage?, resetAfterTokens?}
 *   {status: 429, body?: "text" | {…}, headers?: {"Retry-After": "0"}}
 *   {garbage: "not json"}        a 200 reply whose body is this text
 *   {truncated: true}            a 200 reply cut in half (a streamed one ends before its final message)
 *   {reset: true}                the connection is destroyed without a reply
 *   {content, cutAfterBytes: N}  only the first N bytes of the reply body are sent, then the connection is destroyed
 *   {content, toolCalls: [{name, arguments}]}  a reply calling tools (Ollama: arguments as an object; OpenAI: a
 *                                JSON string, content null when empty)
 * plus `delayMs` (before the reply starts), `match` and `repeat` on any step, and `chunkBytes` + `chunkDelayMs`
 * on a content step: the body goes out in pieces of that size with that pause between them, so a client that
 * stops reading early shows in `sent()`. An empty queue answers HTTP 400 "no scripted reply left" (unless a
 * fallback step is set), so a test that under-scripts fails fast and clearly.
 *
 * With `simulate` (model-server-sim.ts) the server behaves like Ollama on a board: a request waits until its model
 * is loaded (paying the load time, evicting an idle model when the resident limit is reached) and a slot is free,
 * and its reply takes its tokens' generation time; `/api/ps` lists the resident models, a chat with no messages and
 * a `keep_alive` sets the model's expiry (Ollama's unload request), and `simulation()` (or `GET /_simulation` of a
 * standalone server) reports the loads paid.
 *
 * Standalone, for end-to-end tests: `npx tsx test/support/fake-model-server.ts --port 0 --script script.json
 * [--requests requests.jsonl]` prints its URL as the first line of stdout. The script file is a JSON list of
 * steps, or `{"replies": [steps], "fallback"?: step, "models"?: ["name", …], "simulate"?: {…}}`; `--requests` appends every
 * received request as a JSON line. SIGTERM/SIGINT close it.
 */

import { appendFileSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Api, FakeToolCall, Usage } from './fake-model-replies.ts'
import { contentType, errorBody, fullBody, splitTokens, streamParts } from './fake-model-replies.ts'
import { createSimulator } from './model-server-sim.ts'
import type { SimulatorConfig, SimulatorStats } from './model-server-sim.ts'

export interface ReceivedRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  /** The JSON body, or the raw text when it is not JSON (undefined when empty). */
  body: any
}

export interface Step {
  match?: string
  repeat?: boolean
  delayMs?: number
  content?: string | Record<string, unknown> | unknown[] | ((req: ReceivedRequest) => string)
  tokens?: string[]
  tokenDelayMs?: number
  usage?: Partial<Usage>
  resetAfterTokens?: number
  cutAfterBytes?: number
  chunkBytes?: number
  chunkDelayMs?: number
  status?: number
  body?: string | Record<string, unknown>
  headers?: Record<string, string>
  garbage?: string
  truncated?: boolean
  reset?: boolean
  /** Tool calls the reply carries (native tool calling), in each API's shape; always sent unstreamed. */
  toolCalls?: FakeToolCall[]
}

/** What the server wrote of one chat reply's body before it finished or the connection closed. */
export interface SentReply {
  bytes: number
  /** The whole body was written and ended. */
  complete: boolean
  /** The response is over: it finished, or its connection closed (`complete` false: the client hung up first). */
  closed: boolean
}

export interface FakeModelServer {
  url: string
  port: number
  /** Every request received, in arrival order (including /api/tags and friends). */
  requests: ReceivedRequest[]
  /** Only the chat/generate requests. */
  chatRequests(): ReceivedRequest[]
  /** For each reply made from `content` (not `status`, `garbage` or `reset` steps), in order: what went out. */
  sent(): SentReply[]
  script(...steps: Step[]): void
  /** The step used when the queue has nothing for a request (undefined: HTTP 400). */
  fallback(step: Step | undefined): void
  /** Steps not yet used. */
  pending(): number
  /** With `simulate`: the loads the server paid and how long each request waited in it. */
  simulation(): SimulatorStats
  close(): Promise<void>
}

export interface FakeServerOptions {
  port?: number
  models?: string[]
  /** Sizes in bytes that /api/tags reports for those models (default 1). */
  modelSizes?: Record<string, number>
  onRequest?: (req: ReceivedRequest) => void
  /** Behave like a model server with limited memory and slots (model-server-sim.ts). */
  simulate?: SimulatorConfig
  /** The vector of a text for /api/embed and /v1/embeddings (default fakeEmbedding). */
  embed?: (text: string) => number[]
}

const ROUTES: Record<string, Api> = {
  '/api/chat': 'ollama-chat',
  '/api/generate': 'ollama-generate',
  '/v1/chat/completions': 'openai-chat',
}

export async function startFakeModelServer(options: FakeServerOptions = {}): Promise<FakeModelServer> {
  const queue: Step[] = []
  let fallbackStep: Step | undefined
  const requests: ReceivedRequest[] = []
  const sent: SentReply[] = []
  const timers = new Set<NodeJS.Timeout>()
  const models = options.models ?? ['fake:latest']
  const sim = options.simulate ? createSimulator(options.simulate) : undefined

  const wait = (ms: number): Promise<void> =>
    new Promise((done) => {
      const t = setTimeout(() => {
        timers.delete(t)
        done()
      }, ms)
      timers.add(t)
    })

  function take(text: string): Step | undefined {
    const i = queue.findIndex((s) => s.match === undefined || text.includes(s.match))
    if (i === -1) return fallbackStep
    const step = queue[i]!
    if (!step.repeat) queue.splice(i, 1)
    return step
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req)
    const received: ReceivedRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0]!,
      headers: req.headers,
      body: parseBody(raw),
    }
    requests.push(received)
    options.onRequest?.(received)
    if (received.path === '/api/version') return json(res, 200, { version: '0.0.0-fake' })
    if (received.method === 'POST' && (received.path === '/api/embed' || received.path === '/v1/embeddings')) {
      const input: unknown = received.body?.input
      const texts = (Array.isArray(input) ? input : [input]).map(String)
      const model = typeof received.body?.model === 'string' ? received.body.model : 'fake'
      const vectors = texts.map(options.embed ?? fakeEmbedding)
      return received.path === '/api/embed'
        ? json(res, 200, { model, embeddings: vectors })
        : json(res, 200, { object: 'list', model, data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })) })
    }
    if (received.path === '/api/tags')
      return json(res, 200, {
        models: models.map((name) => ({
          name,
          model: name,
          size: options.modelSizes?.[name] ?? 1,
          digest: 'fake',
          modified_at: '2026-01-01T00:00:00Z',
        })),
      })
    if (received.path === '/api/ps') return json(res, 200, { models: sim?.resident() ?? [] })
    if (received.path === '/_simulation') return json(res, 200, sim?.stats() ?? { loads: [], served: [], mostBusy: 0 })
    const api = ROUTES[received.path]
    if (!api || received.method !== 'POST')
      return json(res, 404, { error: `fake model server: no route ${received.method} ${received.path}` })
    const step = take(requestText(received.body))
    if (!step)
      return json(
        res,
        400,
        JSON.parse(errorBody(api, 400, `fake model server: no scripted reply left for ${received.path} (request #${requests.length})`)),
      )
    if (step.delayMs) await wait(step.delayMs)
    if (res.destroyed) return
    if (!sim) return reply(api, step, received, req, res)
    const model = String(received.body?.model ?? '')
    if (Array.isArray(received.body?.messages) && received.body.messages.length === 0 && received.body.keep_alive !== undefined) {
      sim.expire(model, received.body.keep_alive)
      return json(res, 200, { model, message: { role: 'assistant', content: '' }, done: true, done_reason: 'unload' })
    }
    const hungUp = new Promise<void>((done) => res.once('close', () => done()))
    const admission = await sim.admit(model, hungUp)
    try {
      const tokens = step.tokens ?? splitTokens(contentOf(step, received))
      await Promise.race([wait(sim.generationMs(tokens.length)), hungUp])
      if (!res.destroyed) await reply(api, step, received, req, res)
    } finally {
      admission.done(received.body?.keep_alive)
    }
  }

  async function reply(api: Api, step: Step, received: ReceivedRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (step.reset) return void req.socket.destroy()
    const body = received.body ?? {}
    const stream = api === 'openai-chat' ? body.stream === true : body.stream !== false
    if (step.status !== undefined) {
      const text =
        step.body === undefined
          ? errorBody(api, step.status, `fake error ${step.status}`)
          : typeof step.body === 'string'
            ? step.body
            : JSON.stringify(step.body)
      res.writeHead(step.status, {
        'content-type': step.body === undefined || typeof step.body !== 'string' ? 'application/json' : 'text/plain',
        ...step.headers,
      })
      return void res.end(text)
    }
    if (step.garbage !== undefined) {
      res.writeHead(200, { 'content-type': contentType(api, stream), ...step.headers })
      return void res.end(step.garbage)
    }
    const content = contentOf(step, received)
    const tokens = step.tokens ?? splitTokens(content)
    const usage: Usage = {
      prompt_tokens: step.usage?.prompt_tokens ?? 10,
      completion_tokens: step.usage?.completion_tokens ?? tokens.length,
    }
    const model = typeof body.model === 'string' ? body.model : 'fake'
    res.writeHead(200, { 'content-type': contentType(api, stream), ...step.headers })
    const out = bodyWriter(step, req, res)
    if (!stream || step.toolCalls) {
      const text = fullBody(api, model, content, usage, step.toolCalls)
      if (step.truncated) return void out.end(text.slice(0, Math.floor(text.length / 2)))
      if (step.resetAfterTokens !== undefined) {
        await out.write(text.slice(0, Math.floor(text.length / 2)))
        return out.cut()
      }
      return void (await out.end(text))
    }
    const parts = streamParts(api, model, tokens, usage, body.stream_options?.include_usage === true)
    const cut = step.truncated ? Math.ceil(tokens.length / 2) : step.resetAfterTokens
    for (const [i, part] of parts.tokens.entries()) {
      if (cut !== undefined && i >= cut) break
      if (res.destroyed || !(await out.write(part))) return
      if (step.tokenDelayMs) await wait(step.tokenDelayMs)
    }
    if (step.resetAfterTokens !== undefined) return out.cut()
    if (step.truncated) return void (await out.end(''))
    await out.end(parts.end.join(''))
  }

  /**
   * Writes one 200 reply's body, counting what went out (`sent()`): in `chunkBytes` pieces with `chunkDelayMs`
   * between them when the step asks, and destroying the connection once `cutAfterBytes` are out. `write` says
   * whether the reply is still going. A body written whole in one `end` keeps Node's Content-Length framing.
   */
  function bodyWriter(step: Step, req: IncomingMessage, res: ServerResponse) {
    const record: SentReply = { bytes: 0, complete: false, closed: false }
    sent.push(record)
    res.once('close', () => {
      record.closed = true
    })
    let cut = false
    const destroy = (): void => {
      cut = true
      setImmediate(() => req.socket.destroy())
    }
    const write = async (text: string): Promise<boolean> => {
      const data = Buffer.from(text)
      const size = step.chunkBytes ?? Math.max(1, data.length)
      for (let at = 0; at < data.length; at += size) {
        if (cut || res.destroyed) return false
        const room = step.cutAfterBytes === undefined ? size : step.cutAfterBytes - record.bytes
        const piece = data.subarray(at, at + Math.min(size, Math.max(0, room)))
        if (piece.length > 0) res.write(piece)
        record.bytes += piece.length
        if (piece.length < Math.min(size, data.length - at)) {
          destroy()
          return false
        }
        if (step.chunkBytes && step.chunkDelayMs) await wait(step.chunkDelayMs)
      }
      return !(cut || res.destroyed)
    }
    return {
      write,
      async end(text: string): Promise<void> {
        if (record.bytes === 0 && step.chunkBytes === undefined && step.cutAfterBytes === undefined) {
          res.end(text)
          record.bytes = Buffer.byteLength(text)
        } else {
          if (!(await write(text))) return
          res.end()
        }
        record.complete = true
      },
      cut: (): void => void (cut || destroy()),
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) json(res, 500, { error: `fake model server crashed: ${String(e)}` })
      else res.destroy()
    })
  })
  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen(options.port ?? 0, '127.0.0.1', () => done())
  })
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    chatRequests: () => requests.filter((r) => r.path in ROUTES),
    sent: () => sent.map((r) => ({ ...r })),
    script: (...steps) => void queue.push(...steps),
    fallback: (step) => void (fallbackStep = step),
    pending: () => queue.length,
    simulation: () => sim?.stats() ?? { loads: [], served: [], mostBusy: 0 },
    close: () =>
      new Promise<void>((done) => {
        sim?.close()
        for (const t of timers) clearTimeout(t)
        timers.clear()
        server.close(() => done())
        server.closeAllConnections()
      }),
  }
}

/** A deterministic 8-number vector for a text (its character codes folded), for tests of embeddings. */
export function fakeEmbedding(text: string): number[] {
  const v = new Array<number>(8).fill(0)
  for (let i = 0; i < text.length; i++) v[i % 8]! += text.charCodeAt(i) / 1000
  return v.map((x) => Math.round(x * 1000) / 1000)
}

function contentOf(step: Step, req: ReceivedRequest): string {
  const c = step.content
  if (typeof c === 'function') return c(req)
  if (typeof c === 'string') return c
  if (c !== undefined) return JSON.stringify(c)
  return (step.tokens ?? []).join('')
}

/** The text a `match` is looked for in: every message's content, or a generate request's system + prompt. */
function requestText(body: any): string {
  if (!body || typeof body !== 'object') return ''
  if (Array.isArray(body.messages)) return body.messages.map((m: { content?: unknown }) => String(m?.content ?? '')).join('\n')
  return [body.system, body.prompt].filter((s) => typeof s === 'string').join('\n')
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => done(Buffer.concat(chunks).toString('utf8')))
    req.on('error', fail)
  })
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
  res.end(JSON.stringify(value))
}

// --- standalone process (end-to-end tests) ---

export async function runStandalone(argv: string[]): Promise<FakeModelServer> {
  const flag = (name: string): string | undefined => {
    const i = argv.indexOf(name)
    return i === -1 ? undefined : argv[i + 1]
  }
  const scriptPath = flag('--script')
  const requestsPath = flag('--requests')
  const script: unknown = scriptPath ? JSON.parse(readFileSync(scriptPath, 'utf8')) : []
  const spec = (Array.isArray(script) ? { replies: script } : script) as {
    replies?: Step[]
    fallback?: Step
    models?: string[]
    simulate?: SimulatorConfig
  }
  const server = await startFakeModelServer({
    port: Number(flag('--port') ?? 0),
    ...(spec.models ? { models: spec.models } : {}),
    ...(spec.simulate ? { simulate: spec.simulate } : {}),
    ...(requestsPath ? { onRequest: (r) => appendFileSync(requestsPath, `${JSON.stringify(r)}\n`) } : {}),
  })
  server.script(...(spec.replies ?? []))
  server.fallback(spec.fallback)
  process.stdout.write(`${server.url}\n`)
  const stop = (): void => void server.close().then(() => process.exit(0))
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  return server
}

// Runs only when executed directly (`tsx test/support/fake-model-server.ts …`), never when imported by a test.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runStandalone(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`fake-model-server: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  })
}
