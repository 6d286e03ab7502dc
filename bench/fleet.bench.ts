/**
 * The fleet's task store under contention (issue 17): N worker processes (1, 2, 4) claim-and-complete T tasks
 * through the task-store port — lease a ready task, move it to review — on the filesystem store (one data dir) and
 * on the JetStream store (a real `nats-server -js`, file storage in a temp dir). Reports tasks/s, claim latency
 * (p50/p95 of `lease()` that won, lost races included in the time), lost races per task, and on NATS the bytes the
 * server holds per task (JetStream's own account of its storage). Checks after each run that every task is in review
 * exactly once (one `lease.acquired` and one move to review per task).
 *
 * With `--rounds N` every (store, workers) case runs N times, in turn, so that a busy moment hits every case; a
 * summary then gives the median and min–max of each figure over the rounds, and NATS ÷ filesystem of the medians.
 *
 *   npx tsx bench/fleet.bench.ts [--tasks 200] [--workers 1,2,4] [--only fs|nats] [--rounds 1]
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { aofContext } from '../src/aof/index.ts'
import { openNatsStore } from '../src/aof/store/nats/store.ts'
import { fsTaskStore } from '../src/aof/store/fs/store.ts'
import type { TaskStore } from '../src/aof/store/port.ts'
import { isTeaError } from '../src/core/errors.ts'
import { startNatsServer } from '../test/support/nats-server.ts'

interface Where {
  kind: 'fs' | 'nats'
  dir?: string
  url?: string
  project?: string
}

async function open(w: Where): Promise<TaskStore> {
  if (w.kind === 'fs') return fsTaskStore(aofContext(w.dir!, { lock: { timeoutMs: 60_000 } }))
  return openNatsStore({ url: w.url!, project: w.project! })
}

/** A worker process: claims until no ready task is left; prints its claim latencies (ms) as one JSON line. */
async function worker(w: Where, agent: string): Promise<void> {
  const store = await open(w)
  const latencies: number[] = []
  let lost = 0
  // Timed from the first list after the connection is open: process and tsx start-up are not the store's cost.
  const started = Date.now()
  for (;;) {
    const ready = (await store.list(['ready'])).tasks.map((t) => t.id)
    if (ready.length === 0) break
    // Start at a different place per worker, as boards would, so they do not all race for the same first task.
    const start = Math.floor(Math.random() * ready.length)
    for (let i = 0; i < ready.length; i++) {
      const id = ready[(start + i) % ready.length]!
      const t0 = performance.now()
      try {
        await store.lease(id, agent, { ttlMs: 600_000 })
      } catch (e) {
        if (isTeaError(e, 'AOF_LOCKED') || isTeaError(e, 'AOF_TRANSITION')) {
          lost++
          continue
        }
        throw e
      }
      latencies.push(performance.now() - t0)
      await store.transition(id, 'review', { actor: agent, reason: 'done' })
    }
  }
  await store.close()
  process.stdout.write(`${JSON.stringify({ latencies, lost, started, ended: Date.now() })}\n`)
}

function runWorker(w: Where, agent: string): Promise<{ latencies: number[]; lost: number; started: number; ended: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--worker', JSON.stringify(w), agent], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (b) => (out += b))
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`worker ${agent} exited ${code}`)),
    )
  })
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN
}

interface Round {
  perSecond: number
  p50: number
  p95: number
  racesPerTask: number
  exact: string
}

async function one(w: Where, tasks: number, workers: number): Promise<Round> {
  const store = await open(w)
  for (let i = 0; i < tasks; i++) await store.create({ title: `bench ${i}`, status: 'ready' })
  const results = await Promise.all(Array.from({ length: workers }, (_, i) => runWorker(w, `w${i}`)))
  const seconds = (Math.max(...results.map((r) => r.ended)) - Math.min(...results.map((r) => r.started))) / 1000
  const { tasks: inReview } = await store.list(['review'])
  const leases = await store.readEvents({ type: 'lease.acquired' })
  const toReview = (await store.readEvents({ type: 'task.transitioned' })).filter((e) => e.payload.to === 'review')
  const exact = inReview.length === tasks && leases.length === tasks && toReview.length === tasks
  const lat = results.flatMap((r) => r.latencies)
  const lost = results.reduce((a, r) => a + r.lost, 0)
  await store.close()
  return {
    perSecond: tasks / seconds,
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    racesPerTask: lost / tasks,
    exact: exact ? 'yes' : `NO (${inReview.length} in review, ${leases.length} leases, ${toReview.length} moves)`,
  }
}

type Figure = Exclude<keyof Round, 'exact'>

const row = (kind: string, workers: number, cells: string[], last: string) =>
  [kind.padEnd(4), String(workers).padStart(7), ...cells.map((c) => c.padStart(8)), last].join('  ')

const spread = (xs: number[], digits: number) =>
  `${pct(xs, 50).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  if (args[0] === '--worker') return worker(JSON.parse(args[1]!), args[2]!)
  const opt = (name: string, dflt: string) => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1]! : dflt
  }
  const tasks = Number(opt('--tasks', '200'))
  const counts = opt('--workers', '1,2,4').split(',').map(Number)
  const only = opt('--only', '')
  const rounds = Number(opt('--rounds', '1'))
  console.log(`${tasks} tasks; claim = lease() that won; races = lost leases per task; ${rounds} round(s)`)
  console.log('store workers  tasks/s    p50 ms    p95 ms  races/task  each task once')
  const server = only === 'fs' ? undefined : await startNatsServer()
  const kinds = (['fs', 'nats'] as const).filter((k) => (k === 'fs' ? only !== 'nats' : server !== undefined))
  const all = new Map<string, Round[]>()
  try {
    let k = 0
    for (let r = 0; r < rounds; r++) {
      for (const workers of counts) {
        for (const kind of kinds) {
          const dir = kind === 'fs' ? mkdtempSync(join(tmpdir(), 'tea-fleet-bench-')) : undefined
          const w: Where = kind === 'fs' ? { kind, dir } : { kind, url: server!.url, project: `bench${++k}` }
          const got = await one(w, tasks, workers)
          if (dir) rmSync(dir, { recursive: true, force: true })
          all.set(`${kind} ${workers}`, [...(all.get(`${kind} ${workers}`) ?? []), got])
          const cells = [got.perSecond.toFixed(1), got.p50.toFixed(1), got.p95.toFixed(1), got.racesPerTask.toFixed(2)]
          console.log(row(kind, workers, cells, got.exact))
          if (kind === 'nats' && r === 0 && workers === counts[counts.length - 1])
            console.log(`nats bytes/task on the server: ${await bytesPerTask(server!.url, w.project!, tasks)}`)
        }
      }
    }
  } finally {
    await server?.cleanup()
  }
  if (rounds < 2) return
  console.log(`\nmedian (min–max) over ${rounds} rounds; NATS ÷ filesystem of the tasks/s medians`)
  console.log('store workers  tasks/s                p50 ms              p95 ms              races/task  ratio')
  for (const workers of counts) {
    for (const kind of kinds) {
      const rs = all.get(`${kind} ${workers}`)!
      const fs = all.get(`fs ${workers}`)
      const of = (k: Figure) => rs.map((x) => x[k])
      const fsRate = all.get(`fs ${workers}`)?.map((x) => x.perSecond)
      const ratio = kind === 'nats' && fsRate ? (pct(of('perSecond'), 50) / pct(fsRate, 50)).toFixed(2) : ''
      const exact = rs.every((x) => x.exact === 'yes') ? '' : ' (not every task once in some round)'
      const cells = [
        spread(of('perSecond'), 1).padEnd(20),
        spread(of('p50'), 1).padEnd(18),
        spread(of('p95'), 1).padEnd(18),
        pct(of('racesPerTask'), 50).toFixed(2).padStart(10),
      ]
      console.log([kind.padEnd(4), String(workers).padStart(7), ...cells, ratio + exact].join('  '))
    }
  }
}

/** JetStream's stored bytes for the project's buckets and event stream, divided by the task count. */
async function bytesPerTask(url: string, project: string, tasks: number): Promise<string> {
  const { connect } = await import('@nats-io/transport-node')
  const { jetstreamManager } = await import('@nats-io/jetstream')
  const nc = await connect({ servers: url })
  const jsm = await jetstreamManager(nc)
  const parts: string[] = []
  let total = 0
  for (const name of [`KV_${project}_tasks`, `KV_${project}_runs`, `${project}_events`]) {
    const b = (await jsm.streams.info(name)).state.bytes
    total += b
    parts.push(`${name} ${(b / tasks).toFixed(0)}`)
  }
  await nc.close()
  return `${(total / tasks).toFixed(0)} (${parts.join(', ')})`
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
