/**
 * Plan dispatch benchmark (issue 14): per-subtask overhead and CPU-bound parallel speedup of plan.execute, as a
 * distribution over runs, each run its own process. With `--before DIR` (a checkout of another commit, e.g. a
 * `git worktree` with node_modules linked) the runs alternate between that tree and this one, so both see the
 * same machine load; the code measured is that tree's src/, the measuring code is this file.
 *
 *   npx tsx bench/plan-dispatch.ts [--runs 10] [--before DIR] [--only overhead|speedup] [--json FILE]
 *
 * One run (one process, `--child`):
 * - overhead: a pool of 2 workers, started and answering; then 1,000 subtasks with a trivial `run:` executor
 *   (`return subtask.id`) and an LMDB record each (fsynced commits): as a chain (each waits for the previous one's
 *   record: latency), then as 1,000 independent subtasks at max_concurrent 2 (throughput), on the same pool, once
 *   right after the chain ("first") and again after four more such plans ("steady"). Beside them, on the same
 *   pool: the raw round trip of the same code task through the pool, all 1,000 queued at once; and the scheduler
 *   with its LMDB records alone (the pool replaced by an in-thread stub that answers at once), and with a memory
 *   store.
 * - speedup: 100 subtasks of ~5 ms each (an integer loop calibrated in the run) at max_concurrent 1 and 2, each on
 *   a pool of that many workers: on fresh workers (started and answering, the code not yet run: JIT warm-up
 *   included) and again on the same workers ("warm"); the ratio 1 ÷ 2 is taken within the run. The order of the
 *   two cases alternates between runs. Beside them: raw tinypool, 1 and 2 threads, the same tasks all queued at
 *   once, on fresh threads and again on the same threads (the machine's and V8's own ceiling at that moment).
 * The load average (os.loadavg, 1 min) is read before and after every run, and the CPU that other processes used
 * during each part is measured (othersShare): on a shared machine, runs taken while it was high say little.
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchContext, instantPool } from './bench-context.ts'

/** Holds a worker 20 ms, so that `threads` of them at once start every thread (the product's worker runs no probe tasks). */
const WARM_UP = { kind: 'code', selfTimed: true, code: 'const t = Date.now()\nwhile (Date.now() - t < 20) {}\nreturn null', args: {} }

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : undefined
}
const HERE = fileURLToPath(import.meta.url)
const ROOT = resolve(HERE, '..', '..')
const RUNS = Number(arg('--runs') ?? 10)
const ONLY = arg('--only')
const N = 1000
const CPU_N = 100

type Figures = Record<string, number>
interface RunResult {
  load: [number, number]
  overhead?: Figures
  speedup?: Figures
}

/**
 * The share of the machine (all cores) that other processes used while `fn` ran: CPU time the kernel counted on all
 * cores (/proc/stat) minus this process's own (all its threads), over wall time × cores. A fairer witness of a busy
 * machine than the load average, which counts this benchmark's own threads.
 */
async function othersShare<T>(fn: () => Promise<T>): Promise<{ value: T; others: number }> {
  const busy = (): number => {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal, in clock ticks (1/100 s)
    return ((f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0)) * 10
  }
  const ownMs = (): number => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const b0 = busy()
  const o0 = ownMs()
  const t0 = now()
  const value = await fn()
  const wall = now() - t0
  const others = Math.max(0, busy() - b0 - (ownMs() - o0)) / (wall * availableParallelism())
  return { value, others }
}

// --- one run, in a child process, against the src/ of `--src` ---

async function child(src: string, run: number): Promise<RunResult> {
  const load0 = loadavg()[0]!
  const out: RunResult = { load: [load0, 0] }
  const s = await loadSrc(src)
  if (!ONLY || ONLY === 'overhead') {
    const { value, others } = await othersShare(() => overhead(s))
    out.overhead = { ...value, others }
  }
  if (!ONLY || ONLY === 'speedup') {
    const { value, others } = await othersShare(() => speedup(s, run % 2 === 1))
    out.speedup = { ...value, others }
  }
  out.load[1] = loadavg()[0]!
  return out
}

interface Src {
  execute: (params: unknown, ctx: unknown, deps?: unknown) => Promise<Record<string, unknown>>
  parseParams: (params: unknown) => unknown
  createPool: (o: { maxThreads: number }) => BenchPool
  openLmdbStore: (dir: string) => BenchStore
  createMemoryStore: () => BenchStore
}
interface BenchPool {
  run(task: unknown, options?: unknown): Promise<{ value: unknown }>
  close(): Promise<void>
  [k: string]: unknown
}
interface BenchStore {
  close(): Promise<void>
  [k: string]: unknown
}

async function loadSrc(src: string): Promise<Src> {
  const at = (p: string) => import(pathToFileURL(join(src, 'src', p)).href)
  const [exec, params, pool, lmdb, mem, valibot] = await Promise.all([
    at('planning/execute.ts'),
    at('planning/execute-params.ts'),
    at('pool/pool.ts'),
    at('store/lmdb-store.ts'),
    at('store/memory-store.ts'),
    import('valibot'),
  ])
  return {
    execute: exec.execute,
    parseParams: (p) => valibot.parse(params.executeParams, p),
    createPool: pool.createPool,
    openLmdbStore: lmdb.openLmdbStore,
    createMemoryStore: mem.createMemoryStore,
  }
}

const now = (): number => Number(process.hrtime.bigint()) / 1e6

const context = (store: BenchStore, state: Record<string, unknown> = {}): unknown => benchContext(store, `run-${Math.random()}`, state)

function makePlan(n: number, shape: 'chain' | 'wide', id: string): unknown {
  const subtasks = Array.from({ length: n }, (_, k) => ({
    id: `t${k + 1}`,
    description: `subtask number ${k + 1}`,
    dependencies: shape === 'chain' && k > 0 ? [`t${k}`] : [],
    status: 'pending',
  }))
  return { id, goal: 'benchmark', strategy: 'flat', subtasks, replan_count: 0, max_replans: 0, created_at: 0 }
}

/** Runs a plan on `pool` (kept open); µs per subtask, or the wall ms with `ms`. */
async function timePlan(
  s: Src,
  store: BenchStore,
  pool: BenchPool,
  plan: unknown,
  params: Record<string, unknown>,
  state: Record<string, unknown> = {},
): Promise<number> {
  const lent = { ...pool, close: async () => {} }
  const t = now()
  const out = await s.execute(s.parseParams({ plan, ...params }), context(store, state), { createPool: () => lent })
  const ms = now() - t
  if (out.success !== true) throw new Error(`a benchmark plan failed: ${JSON.stringify(out.plan_error)}`)
  return ms
}

async function startPool(s: Src, threads: number): Promise<BenchPool> {
  const pool = s.createPool({ maxThreads: threads })
  await Promise.all(Array.from({ length: threads }, () => pool.run(WARM_UP)))
  return pool
}

const trivial = { subtask_executor: { run: 'return subtask.id' }, max_concurrent: 2 }
const perSubtask = (ms: number): number => (ms * 1000) / N

async function overhead(s: Src): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-plan-dispatch-'))
  const store = s.openLmdbStore(dir)
  const f: Figures = {}
  try {
    let t = now()
    const pool = await startPool(s, 2)
    f.poolStartMs = now() - t
    f.chain = perSubtask(await timePlan(s, store, pool, makePlan(N, 'chain', 'chain'), trivial))
    f.wideFirst = perSubtask(await timePlan(s, store, pool, makePlan(N, 'wide', 'wide0'), trivial))
    for (let k = 1; k <= 4; k++) f.wideSteady = perSubtask(await timePlan(s, store, pool, makePlan(N, 'wide', `wide${k}`), trivial))
    const task = (k: number) => ({
      kind: 'code',
      selfTimed: true,
      code: 'return subtask.id',
      args: { state: {}, subtask: { id: `t${k}` } },
      trackState: true,
      where: { subtask: `t${k}` },
    })
    t = now()
    await Promise.all(Array.from({ length: N }, (_, k) => pool.run(task(k), { timeoutMs: 30_000 })))
    f.rawAllAtOnce = perSubtask(now() - t)
    await pool.close()
    // The planning layer alone: a pool that answers at once, in this thread (batches too, where the code has them).
    const stub: BenchPool = instantPool()
    await timePlan(s, store, stub, makePlan(N, 'wide', 'stub-warm'), trivial)
    f.stubLmdb = perSubtask(await timePlan(s, store, stub, makePlan(N, 'wide', 'stub'), trivial))
    const mem = s.createMemoryStore()
    await timePlan(s, mem, stub, makePlan(N, 'wide', 'mem-warm'), trivial)
    f.stubMemory = perSubtask(await timePlan(s, mem, stub, makePlan(N, 'wide', 'mem'), trivial))
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return f
}

const SPIN = 'let x = 0; for (let i = 0; i < state.iters; i++) x = (x * 31 + i) | 0; return x'

function calibrate(targetMs: number): number {
  const spin = new Function('state', SPIN) as (s: { iters: number }) => number
  let iters = 100_000
  for (;;) {
    const t = now()
    spin({ iters })
    const ms = now() - t
    if (ms > 20) return Math.round((iters * targetMs) / ms)
    iters *= 2
  }
}

async function speedup(s: Src, twoFirst: boolean): Promise<Figures> {
  const iters = calibrate(5)
  const spin = new Function('state', SPIN) as (s: { iters: number }) => number
  const f: Figures = { iters }
  let t = now()
  for (let k = 0; k < CPU_N; k++) spin({ iters })
  f.serial = now() - t
  const dir = mkdtempSync(join(tmpdir(), 'tea-plan-dispatch-'))
  const store = s.openLmdbStore(dir)
  try {
    for (const mc of twoFirst ? [2, 1] : [1, 2]) {
      const pool = await startPool(s, mc)
      const params = { subtask_executor: { run: SPIN }, max_concurrent: mc }
      f[`fresh${mc}`] = await timePlan(s, store, pool, makePlan(CPU_N, 'wide', `cpu${mc}a`), params, { iters })
      f[`warm${mc}`] = await timePlan(s, store, pool, makePlan(CPU_N, 'wide', `cpu${mc}b`), params, { iters })
      await pool.close()
    }
    for (const threads of twoFirst ? [2, 1] : [1, 2]) {
      const pool = await startPool(s, threads)
      const all = () =>
        Promise.all(
          Array.from({ length: CPU_N }, () => pool.run({ kind: 'code', selfTimed: true, code: SPIN, args: { state: { iters } } })),
        )
      // Fresh threads first (the loop not yet run in them: V8's tier-up of it included), then warm ones.
      t = now()
      await all()
      f[`rawFresh${threads}`] = now() - t
      t = now()
      await all()
      f[`raw${threads}`] = now() - t
      await pool.close()
    }
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
  f.ratioFresh = f.fresh1! / f.fresh2!
  f.ratioWarm = f.warm1! / f.warm2!
  f.ratioRaw = f.raw1! / f.raw2!
  f.ratioRawFresh = f.rawFresh1! / f.rawFresh2!
  return f
}

// --- the parent: runs, alternating trees, and the report ---

function gitHead(dir: string): string {
  const r = spawnSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' })
  const dirty = spawnSync('git', ['-C', dir, 'status', '--porcelain', '--', 'src/pool', 'src/planning'], { encoding: 'utf8' })
  return `${r.stdout.trim()}${dirty.stdout.trim() ? ' + uncommitted src/pool, src/planning' : ''}`
}

function runChild(src: string, run: number): RunResult {
  const args = ['--import', 'tsx', HERE, '--child', '--src', src, '--run', String(run), ...(ONLY ? ['--only', ONLY] : [])]
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', cwd: ROOT, maxBuffer: 1 << 24 })
  if (r.status !== 0) throw new Error(`run ${run} in ${src} failed:\n${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as RunResult
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
const spread = (xs: number[], d: number): string =>
  `**${median(xs).toFixed(d)}** (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`

function report(label: string, trees: Array<{ name: string; runs: RunResult[] }>): void {
  const col = (pick: (r: RunResult) => number | undefined, d: number) =>
    trees.map(({ runs }) => {
      const xs = runs.map(pick).filter((x): x is number => x !== undefined && Number.isFinite(x))
      return xs.length ? spread(xs, d) : '—'
    })
  const head = `| ${label} | ${trees.map((t) => t.name).join(' | ')} |\n|---|${trees.map(() => '---').join('|')}|`
  const row = (name: string, pick: (r: RunResult) => number | undefined, d = 1) => `| ${name} | ${col(pick, d).join(' | ')} |`
  const lines: string[] = []
  if (trees[0]!.runs[0]!.overhead) {
    lines.push(`\nPer subtask, µs: median (min–max) of ${trees[0]!.runs.length} runs\n`, head)
    lines.push(row(`${N} independent, max_concurrent 2, right after the chain (the bar's figure)`, (r) => r.overhead?.wideFirst))
    lines.push(row(`${N} independent, steady (the 5th such plan on the pool)`, (r) => r.overhead?.wideSteady))
    lines.push(row(`chain of ${N} (each waits for the previous record's fsynced commit)`, (r) => r.overhead?.chain))
    lines.push(row('raw pool round trip, same code task, all queued at once', (r) => r.overhead?.rawAllAtOnce))
    lines.push(row('scheduler + LMDB record (pool replaced by an in-thread stub)', (r) => r.overhead?.stubLmdb))
    lines.push(row('scheduler alone (stub pool, memory store)', (r) => r.overhead?.stubMemory))
    lines.push(row('pool start, 2 workers answering (ms)', (r) => r.overhead?.poolStartMs, 0))
    lines.push(row('CPU used by other processes meanwhile, % of the machine', (r) => 100 * r.overhead!.others!, 0))
  }
  if (trees[0]!.runs[0]!.speedup) {
    lines.push(
      `\nCPU-bound: ${CPU_N} subtasks of ~5 ms, ${availableParallelism()} cores; median (min–max) of ${trees[0]!.runs.length} runs\n`,
      head,
    )
    lines.push(row('speedup, max_concurrent 2 vs 1, fresh workers (ratio within each run)', (r) => r.speedup?.ratioFresh, 2))
    lines.push(row('speedup, same, warm workers (the plan again on the same pool)', (r) => r.speedup?.ratioWarm, 2))
    lines.push(row('raw tinypool, 2 threads vs 1 (the ceiling at that moment)', (r) => r.speedup?.ratioRaw, 2))
    lines.push(row('raw tinypool, 2 fresh threads vs 1 (the ceiling for fresh workers)', (r) => r.speedup?.ratioRawFresh, 2))
    lines.push(row('max_concurrent 1, fresh (ms)', (r) => r.speedup?.fresh1, 0))
    lines.push(row('max_concurrent 2, fresh (ms)', (r) => r.speedup?.fresh2, 0))
    lines.push(row('max_concurrent 1, warm (ms)', (r) => r.speedup?.warm1, 0))
    lines.push(row('max_concurrent 2, warm (ms)', (r) => r.speedup?.warm2, 0))
    lines.push(row('the same loops, serially in the main thread (ms)', (r) => r.speedup?.serial, 0))
    lines.push(row('CPU used by other processes meanwhile, % of the machine', (r) => 100 * r.speedup!.others!, 0))
  }
  lines.push(row('load average (1 min), at the start and end of each run, the higher', (r) => Math.max(...r.load), 2))
  console.log(lines.join('\n'))
}

if (process.argv.includes('--child')) {
  const result = await child(resolve(arg('--src') ?? ROOT), Number(arg('--run') ?? 0))
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
} else {
  const before = arg('--before')
  const trees = [
    ...(before ? [{ name: `before (${gitHead(before)})`, src: resolve(before) }] : []),
    { name: `after (${gitHead(ROOT)})`, src: ROOT },
  ]
  const runs = trees.map(() => [] as RunResult[])
  console.log(`# plan-dispatch — ${new Date().toISOString()} — node ${process.version}, ${availableParallelism()} cores`)
  console.log(`command: npx tsx bench/plan-dispatch.ts ${process.argv.slice(2).join(' ')}`.trimEnd())
  for (let k = 0; k < RUNS; k++)
    trees.forEach((t, i) => {
      const r = runChild(t.src, k)
      runs[i]!.push(r)
      process.stderr.write(`run ${k + 1}/${RUNS} ${t.name}: load ${r.load.map((x) => x.toFixed(2)).join('→')}\n`)
    })
  const results = trees.map((t, i) => ({ name: t.name, runs: runs[i]! }))
  report('case', results)
  const json = arg('--json')
  if (json) writeFileSync(json, `${JSON.stringify(results)}\n`)
}
