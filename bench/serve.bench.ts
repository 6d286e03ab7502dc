/**
 * `tea serve` (issue 16): idle RSS, run-start and status-read requests per second, and SSE event latency from a
 * node's end to the client. Drives the built bundle (`node build.mjs --target linux-x64` first) as a user would,
 * over HTTP with keep-alive clients of our own. Run: `node --import tsx bench/serve.bench.ts [--quick]`; prints a
 * markdown table (medians of 3 rounds; latency: median and p95 over every event).
 *
 * - idle RSS: VmRSS of the daemon 2 s after start, and again after the load below (what a long-lived daemon holds).
 * - run start: POST /api/runs of a 1-node agent by 8 concurrent clients for 3 s (201 responses/s; the runs execute
 *   meanwhile, 2 at a time, the rest queued), then the time until every one has completed.
 * - status read: GET /api/runs/:id by 16 concurrent clients for 3 s.
 * - SSE latency: a 40-node run whose nodes each wait 10 ms and return Date.now(); latency = arrival of the
 *   node's `node_end` at an SSE client − that time (same clock). It includes the checkpoint's commit: node_end is
 *   emitted when the node's record is durable.
 */

import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { cpus, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 1 : 3
const SECONDS = quick ? 1 : 3
const BUNDLE = resolve(import.meta.dirname, '../dist/linux-x64/tea.cjs')
const agent = new Agent({ keepAlive: true, maxSockets: 64 })

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!

function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((done, fail) => {
    const req = request(`${url}${path}`, { method, agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let data = ''
      res.on('data', (d) => (data += d))
      res.on('end', () => done({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined }))
    })
    req.on('error', fail)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

async function startDaemon(dir: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [BUNDLE, 'serve', '--listen', '127.0.0.1:0', '--data-dir', join(dir, 'data'), '--agents', join(dir, 'agents'), '--min-free-mb', '0'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let err = ''
  const url = await new Promise<string>((done, fail) => {
    child.stderr!.on('data', (d) => {
      err += d
      const m = /listening on (http:\/\/\S+)/.exec(err)
      if (m) done(m[1]!)
    })
    child.on('exit', () => fail(new Error(err)))
  })
  child.stderr!.resume()
  return {
    url,
    pid: child.pid!,
    stop: () => new Promise((done) => (child.once('exit', () => done()), child.kill('SIGTERM'))),
  }
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024

/** `clients` loops calling `fn` for `seconds`; resolves with calls per second. */
async function load(clients: number, seconds: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const end = performance.now() + seconds * 1000
  let n = 0
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) await fn(n++)
    }),
  )
  return n / seconds
}

async function sseLatencies(url: string, runId: string): Promise<number[]> {
  return new Promise((done, fail) => {
    const out: number[] = []
    const req = request(`${url}/api/runs/${runId}/events`, { agent }, (res) => {
      let buf = ''
      res.on('data', (d) => {
        const now = Date.now()
        buf += d
        const frames = buf.split('\n\n')
        buf = frames.pop()!
        for (const f of frames) {
          const e = JSON.parse(f.slice(6))
          if (e.type === 'node_end' && typeof e.update?.t === 'number') out.push(now - e.update.t)
        }
      })
      res.on('end', () => done(out))
    })
    req.on('error', fail)
    req.end()
  })
}

async function round(): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-serve-bench-'))
  mkdirSync(join(dir, 'agents'))
  writeFileSync(join(dir, 'agents/one.yaml'), 'name: one\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n')
  writeFileSync(
    join(dir, 'agents/slow.yaml'),
    `name: slow\nnodes:\n${Array.from({ length: 40 }, (_, i) => `  - name: n${i}\n    run: "await new Promise((r) => setTimeout(r, 10)); return { t: Date.now() }"`).join('\n')}\n`,
  )
  const d = await startDaemon(dir)
  try {
    await new Promise((r) => setTimeout(r, 2000))
    const idle = rssMiB(d.pid)
    const latencies: number[] = []
    const slow = await call(d.url, 'POST', '/api/runs', { agent: 'slow', run_id: 'slow' })
    latencies.push(...(await sseLatencies(d.url, slow.body.run_id)))
    const t0 = performance.now()
    const starts = await load(8, SECONDS, () => call(d.url, 'POST', '/api/runs', { agent: 'one' }))
    let queued = Infinity
    while (queued > 0) {
      const h = await call(d.url, 'GET', '/api/health')
      queued = h.body.active + h.body.queued
      if (queued) await new Promise((r) => setTimeout(r, 20))
    }
    const drained = (performance.now() - t0) / 1000
    const runs = (await call(d.url, 'GET', '/api/runs')).body.length - 1
    const reads = await load(16, SECONDS, () => call(d.url, 'GET', '/api/runs/slow'))
    await new Promise((r) => setTimeout(r, 2000))
    return {
      idle,
      after: rssMiB(d.pid),
      starts,
      completed: runs / drained,
      reads,
      latencyMedian: median(latencies),
      latencyP95: p95(latencies),
    }
  } finally {
    await d.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

const rounds: Array<Record<string, number>> = []
for (let i = 0; i < ROUNDS; i++) rounds.push(await round())
const m = (k: string) => median(rounds.map((r) => r[k]!))
console.log(`tea serve, ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}, medians of ${ROUNDS} round(s)\n`)
console.log('| what | figure |\n|---|---|')
console.log(`| idle RSS after start | ${m('idle').toFixed(1)} MiB |`)
console.log(`| idle RSS after the load below | ${m('after').toFixed(1)} MiB |`)
console.log(`| run start, POST /api/runs (1-node agent, 8 clients) | ${m('starts').toFixed(0)} req/s |`)
console.log(`| runs completed per second (those runs, 2 at a time) | ${m('completed').toFixed(0)} runs/s |`)
console.log(`| status read, GET /api/runs/:id (16 clients) | ${m('reads').toFixed(0)} req/s |`)
console.log(`| SSE latency, node end → client (median / p95) | ${m('latencyMedian').toFixed(1)} / ${m('latencyP95').toFixed(1)} ms |`)
