/**
 * `tea worker` processes on the fleet (issue 17, measured): N real workers of one agent id (1, 2, 4) from the built
 * bundle, each running a one-node agent on every task it claims (LMDB checkpoints in its own data dir on NATS, in
 * the shared one on the filesystem), against T ready tasks — on the filesystem store and on a real `nats-server -js`.
 * Where `bench/fleet.bench.ts` times the store alone (lease, move), this times what a user sees: claim, lease,
 * heartbeat, agent run, report. tasks/s is T over the time from the first worker's first `starting run` to the last
 * task's report (process start-up left out); per task = the median time between one worker's consecutive reports.
 * Checks after each run that every task is in review and was reported done exactly once.
 *
 *   node build.mjs --target linux-x64 && npx tsx bench/fleet-worker.bench.ts [--tasks 100] [--workers 1,2,4] [--only fs|nats]
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { aofContext } from '../src/aof/index.ts'
import { openNatsStore } from '../src/aof/store/nats/store.ts'
import { fsTaskStore } from '../src/aof/store/fs/store.ts'
import type { TaskStore } from '../src/aof/store/port.ts'
import { startNatsServer } from '../test/support/nats-server.ts'

const BUNDLE = resolve(import.meta.dirname, '../dist/linux-x64/tea.cjs')
const AGENT = `name: bench-agent
nodes:
  - name: work
    run: "return { summary: 'did ' + state.task.title }"
`

interface Worker {
  child: ChildProcess
  /** Times (ms since the epoch) of the worker's report lines, and of its first `starting run`. */
  reports: Array<{ at: number; taskId: string; outcome: string }>
  firstStart?: number
  exited: Promise<void>
}

function startWorker(args: string[], env: NodeJS.ProcessEnv): Worker {
  const child = spawn(process.execPath, [BUNDLE, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
  const w: Worker = { child, reports: [], exited: new Promise((r) => child.on('close', () => r())) }
  let out = ''
  child.stdout!.on('data', (b: Buffer) => {
    const at = Date.now()
    out += b.toString()
    const lines = out.split('\n')
    out = lines.pop()!
    for (const l of lines.filter(Boolean)) {
      const { taskId, outcome } = JSON.parse(l) as { taskId: string; outcome: string }
      w.reports.push({ at, taskId, outcome })
    }
  })
  child.stderr!.on('data', (b: Buffer) => {
    if (w.firstStart === undefined && b.toString().includes('starting run')) w.firstStart = Date.now()
  })
  return w
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor(s.length / 2)]! : Number.NaN
}

async function one(kind: 'fs' | 'nats', url: string | undefined, project: string, tasks: number, workers: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-fleet-worker-bench-'))
  writeFileSync(join(dir, 'agent.yaml'), AGENT)
  const env = { ...process.env, TEA_DATA_DIR: undefined, TEA_NATS_PROJECT: project }
  let store: TaskStore | undefined
  const ws: Worker[] = []
  try {
    store = url ? await openNatsStore({ url, project }) : fsTaskStore(aofContext(join(dir, 'shared'), { lock: { timeoutMs: 60_000 } }))
    for (let i = 0; i < tasks; i++) await store.create({ title: `bench ${i}`, agent: 'swe', status: 'ready' })
    for (let i = 0; i < workers; i++) {
      const data = url ? join(dir, `board${i}`) : join(dir, 'shared')
      mkdirSync(data, { recursive: true })
      const where = url ? ['--nats', url, '--data-dir', data] : ['--data-dir', data]
      const args = ['worker', '--agent-id', 'swe', '--agent', join(dir, 'agent.yaml'), '--interval-ms', '100', ...where]
      ws.push(startWorker(args, env))
    }
    const reported = () => ws.reduce((n, w) => n + w.reports.length, 0)
    while (reported() < tasks) {
      if (ws.some((w) => w.child.exitCode !== null)) throw new Error('a worker ended early')
      await new Promise((r) => setTimeout(r, 20))
    }
    const first = Math.min(...ws.map((w) => w.firstStart ?? Number.POSITIVE_INFINITY))
    const last = Math.max(...ws.flatMap((w) => w.reports.map((r) => r.at)))
    const gaps = ws.flatMap((w) => w.reports.slice(1).map((r, i) => r.at - w.reports[i]!.at))
    const done = ws.flatMap((w) => w.reports.filter((r) => r.outcome === 'done').map((r) => r.taskId))
    const inReview = (await store.list(['review'])).tasks.length
    const exact = new Set(done).size === tasks && done.length === tasks && inReview === tasks
    return [
      kind.padEnd(5),
      String(workers).padStart(7),
      ((tasks * 1000) / (last - first)).toFixed(1).padStart(8),
      median(gaps).toFixed(0).padStart(10),
      exact ? 'yes' : `NO (${done.length} reports, ${new Set(done).size} tasks, ${inReview} in review)`,
    ].join('  ')
  } finally {
    for (const w of ws) w.child.kill('SIGTERM')
    await Promise.all(ws.map((w) => w.exited))
    await store?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: node build.mjs --target linux-x64`)
  const args = process.argv.slice(2)
  const opt = (name: string, dflt: string) => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1]! : dflt
  }
  const tasks = Number(opt('--tasks', '100'))
  const counts = opt('--workers', '1,2,4').split(',').map(Number)
  const only = opt('--only', '')
  console.log(`${tasks} tasks, tea worker processes of one agent id, a one-node agent`)
  console.log('store  workers  tasks/s  ms/task/worker  each task once')
  const server = only === 'fs' ? undefined : await startNatsServer()
  try {
    let k = 0
    for (const workers of counts) {
      if (only !== 'nats') console.log(await one('fs', undefined, '', tasks, workers))
      if (server) console.log(await one('nats', server.url, `wbench${++k}`, tasks, workers))
    }
  } finally {
    await server?.cleanup()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
