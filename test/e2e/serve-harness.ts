/**
 * Starts the built bundle's `tea serve` on a free loopback port and talks to it: the URL it printed, JSON
 * requests, an SSE reader, and `stop` (SIGTERM, then the exit code) / `kill` (SIGKILL). Tests end every daemon
 * they start.
 */

import type { ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { connect } from 'node:net'
import { spawnTea, type TeaOptions } from './cli.ts'

export interface Daemon {
  url: string
  child: ChildProcess
  stderr(): string
  /** Resolves when stderr has a line matching `pattern` (the log is the daemon's only narration). */
  waitLog(pattern: RegExp, timeoutMs?: number): Promise<string>
  json(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>
  /** Every event of a run's SSE stream, until the server ends it. */
  events(runId: string): Promise<Array<Record<string, any>>>
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * An agent that waits at a gate the test opens (`startGate`), so "in the middle of the run" is an event, not a guess
 * at timing. The gate is on loopback, which outbound HTTP reaches only when allowed.
 */
export const GATED = `name: gated
settings: { http: { allow: ["127.0.0.1"] } }
nodes:
  - name: first
    run: "return { first: true }"
  - name: wait
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
    output: waited
  - name: last
    run: "return { last: true }"
`

export async function startServe(args: string[], options: TeaOptions = {}): Promise<Daemon> {
  const child = spawnTea(['serve', '--listen', '127.0.0.1:0', ...args], options)
  let err = ''
  const waiters = new Set<() => void>()
  child.stderr!.on('data', (d) => {
    err += d
    for (const w of waiters) w()
  })
  child.stdout!.resume()
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  const waitLog = (pattern: RegExp, timeoutMs = 20_000): Promise<string> =>
    new Promise((done, fail) => {
      const check = (): void => {
        const m = pattern.exec(err)
        if (m) {
          waiters.delete(check)
          clearTimeout(timer)
          done(m[0])
        }
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        fail(new Error(`no log line matching ${pattern} within ${timeoutMs} ms; stderr:\n${err}`))
      }, timeoutMs)
      waiters.add(check)
      child.once('exit', () => setTimeout(check, 10))
      check()
    })
  const first = await Promise.race([waitLog(/listening on (http:\/\/\S+)/), exited.then(() => undefined)])
  if (!first) throw new Error(`tea serve exited at start: ${err}`)
  const url = /http:\/\/\S+/.exec(first)![0]
  return {
    url,
    child,
    stderr: () => err,
    waitLog,
    json: (method, path, body, headers = {}) => httpJson(url, method, path, body, headers),
    events: (runId) => sse(url, `/api/runs/${runId}/events`),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}

export function httpJson(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((done, fail) => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    const req = request(`${url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let data = ''
      res.on('data', (d) => (data += d))
      res.on('end', () => {
        let parsed: unknown = data
        try {
          parsed = JSON.parse(data)
        } catch {}
        done({ status: res.statusCode!, body: parsed, headers: res.headers })
      })
    })
    req.on('error', fail)
    req.end(text)
  })
}

/**
 * A POST that declares a body of `bytes` and sends none of it, read to the server's answer. A server refuses a
 * declared body over its limit before reading it and closes the connection behind its answer; a client still
 * sending the body then meets a reset (EPIPE), which may come before it has read the answer. Headers alone always
 * get the answer.
 */
export function declaredBody(url: string, path: string, bytes: number): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url)
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname)
    let data = ''
    socket.on('data', (d) => (data += d))
    socket.on('error', fail)
    // A server that waited for the body instead would never answer.
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to a declared body of ${bytes} bytes within 10 s`)))
    socket.on('close', () => {
      const [head = '', text = ''] = data.split('\r\n\r\n')
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {}
      done({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]), body })
    })
    socket.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`)
  })
}

export function sse(url: string, path: string, headers: Record<string, string> = {}): Promise<Array<Record<string, any>>> {
  return new Promise((done, fail) => {
    const req = request(`${url}${path}`, { headers }, (res) => {
      let data = ''
      res.on('data', (d) => (data += d))
      // 'close' as well as 'end': a client tea cuts off gets its connection destroyed, not ended.
      const finish = (): void =>
        done(
          data
            .split('\n\n')
            .filter((f) => f.startsWith('data: '))
            .map((f) => JSON.parse(f.slice(6))),
        )
      res.on('end', finish)
      res.on('close', finish)
    })
    req.on('error', fail)
    req.end()
  })
}

/**
 * A gate for agents to wait at: `http.get` of its URL is held until `open()` (then answered at once), so a test
 * acts "while a node is in flight" on an event rather than a guess at timing. `waiting()` resolves when `n`
 * requests are held.
 */
export async function startGate(): Promise<{
  url: string
  open(): void
  waiting(n: number): Promise<void>
  /** Requests held so far (those of killed clients included). */
  held(): number
  close(): Promise<void>
}> {
  const { createServer } = await import('node:http')
  let opened = false
  const held: Array<import('node:http').ServerResponse> = []
  const watchers: Array<() => void> = []
  const server = createServer((_req, res) => {
    if (opened) return void res.end('{"open":true}')
    held.push(res)
    for (const w of watchers.splice(0)) w()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as import('node:net').AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/gate`,
    open() {
      opened = true
      for (const res of held.splice(0)) res.end('{"open":true}')
    },
    held: () => held.length,
    waiting(n) {
      return new Promise((done) => {
        const check = (): void => (held.length >= n ? done() : void watchers.push(check))
        check()
      })
    },
    close() {
      for (const res of held.splice(0)) res.destroy()
      server.closeAllConnections()
      return new Promise((r) => server.close(() => r()))
    },
  }
}

/** Follows a run's SSE stream until an event `when` accepts, then closes it (resolves with that event). */
export function waitEvent(url: string, runId: string, when: (e: Record<string, any>) => boolean): Promise<Record<string, any>> {
  return new Promise((done, fail) => {
    const req = request(`${url}/api/runs/${runId}/events`, (res) => {
      let data = ''
      res.on('data', (d) => {
        data += d
        const frames = data.split('\n\n')
        data = frames.pop()!
        for (const f of frames) {
          if (!f.startsWith('data: ')) continue
          const event = JSON.parse(f.slice(6))
          if (when(event)) {
            req.destroy()
            return done(event)
          }
        }
      })
      res.on('end', () => fail(new Error(`the stream of ${runId} ended before the event awaited`)))
    })
    req.on('error', (e) => (req.destroyed ? undefined : fail(e)))
    req.end()
  })
}
