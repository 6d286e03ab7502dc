/**
 * Planning benchmark (SPEC §4: plan overhead per subtask, CPU-bound parallel speedup, plan checkpoint bytes).
 * Run: npx tsx bench/plan.bench.ts [--rounds N] [--only overhead|speedup|bytes]   (results: bench/plan.results.md)
 *
 * Everything goes through `execute()` of plan.execute — worker pool, scheduler, LMDB checkpoints in a temp dir
 * (fsynced commits) — with a context built by hand instead of an agent run, so the figures are the planning layer's.
 * - overhead: 1,000 subtasks with a trivial `run:` executor (`return subtask.id`), as a chain (each waits for the
 *   previous: latency) and as 1,000 independent subtasks at max_concurrent 2 (throughput); per subtask, against the
 *   raw tinypool round trip of the same code task measured in the same process.
 * - speedup: 100 subtasks each a ~5 ms integer loop (calibrated here), max_concurrent 1 vs 2; the same work as a
 *   LangGraph.js fan-out (Send API, 100 branches, no checkpointer; in a child process, plan-langgraph.ts), raw
 *   tinypool, and the 100 loops run serially in the main thread.
 * - bytes: plans of 100 and 10,000 subtasks executed end to end; bytes held in the `plans` database (keys + values:
 *   header, subtask records, plan counter), and the same plan with empty descriptions and `null` results, so that
 *   what remains is the cost beyond the subtasks' own text and results.
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as v from 'valibot'
import type { ActionContext } from '../src/actions/types.ts'
import { execute } from '../src/planning/execute.ts'
import { executeParams } from '../src/planning/execute-params.ts'
import type { Plan, Subtask } from '../src/planning/types.ts'
import { createPool } from '../src/pool/pool.ts'
import type { Pool } from '../src/pool/pool.ts'
import { _openRawDb, openLmdbStore } from '../src/store/lmdb-store.ts'
import { createMemoryStore } from '../src/store/memory-store.ts'
import type { Store } from '../src/store/types.ts'
import { benchContext, instantPool } from './bench-context.ts'

/** Holds a worker 20 ms, so that `threads` of them at once start every thread (the product's worker runs no probe tasks). */
const WARM_UP = { kind: 'code', selfTimed: true, code: 'const t = Date.now()\nwhile (Date.now() - t < 20) {}\nreturn null', args: {} }

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : undefined
}
const ROUNDS = Number(arg('--rounds') ?? 5)
const ONLY = arg('--only')

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const fmt = (xs: number[], d = 1): string => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`
const now = (): number => Number(process.hrtime.bigint()) / 1e6

const context = (store: Store, runId: string, state: Record<string, unknown> = {}): ActionContext =>
  benchContext(store, runId, state) as unknown as ActionContext

function makePlan(n: number, shape: 'chain' | 'wide', description: (i: number) => string = (i) => `subtask number ${i}`): Plan {
  const subtasks: Subtask[] = []
  for (let i = 1; i <= n; i++)
    subtasks.push({
      id: `t${i}`,
      description: description(i),
      dependencies: shape === 'chain' && i > 1 ? [`t${i - 1}`] : [],
      status: 'pending',
    })
  return { id: `plan_${shape}_${n}`, goal: 'benchmark', strategy: 'flat', subtasks, replan_count: 0, max_replans: 0, created_at: 0 }
}

async function withStore<T>(fn: (store: Store, dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-plan-bench-'))
  const store = openLmdbStore(dir)
  try {
    return await fn(store, dir)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function runPlan(
  store: Store,
  plan: Plan,
  params: Record<string, unknown>,
  state: Record<string, unknown> = {},
  pool?: Pool,
): Promise<Record<string, unknown>> {
  // A shared, already started pool measures the steady state; without one, execute starts (and closes) its own.
  const deps = pool ? { createPool: () => ({ ...pool, close: async () => {} }) } : {}
  return execute(v.parse(executeParams, { plan, ...params }), context(store, `run-${plan.id}-${Math.random()}`, state), deps)
}

async function warmPool(threads: number): Promise<Pool> {
  const pool = createPool({ maxThreads: threads })
  await Promise.all(Array.from({ length: threads }, () => pool.run(WARM_UP)))
  return pool
}

async function overhead(): Promise<void> {
  const N = 1000
  const r = {
    chain: [] as number[],
    wide: [] as number[],
    rawSeq: [] as number[],
    rawPar: [] as number[],
    start: [] as number[],
    cold: [] as number[],
    stubWide: [] as number[],
    stubMem: [] as number[],
  }
  // The planning layer alone: the pool replaced by an in-thread stub that answers at once.
  const stub = instantPool() as unknown as Pool
  const trivial = { subtask_executor: { run: 'return subtask.id' }, max_concurrent: 2 }
  for (let round = 0; round < ROUNDS; round++) {
    let t = now()
    const pool = await warmPool(2)
    r.start.push(now() - t)
    await withStore(async (store) => {
      t = now()
      const a = await runPlan(store, makePlan(N, 'chain'), trivial, {}, pool)
      r.chain.push(((now() - t) * 1000) / N)
      t = now()
      const b = await runPlan(store, makePlan(N, 'wide'), trivial, {}, pool)
      r.wide.push(((now() - t) * 1000) / N)
      t = now()
      const c = await runPlan(store, { ...makePlan(N, 'wide'), id: 'cold' }, trivial)
      r.cold.push(((now() - t) * 1000) / N)
      t = now()
      const d = await runPlan(store, { ...makePlan(N, 'wide'), id: 'stub' }, trivial, {}, stub)
      r.stubWide.push(((now() - t) * 1000) / N)
      if (a.success !== true || b.success !== true || c.success !== true || d.success !== true) throw new Error('a benchmark plan failed')
    })
    let t2 = now()
    await runPlan(createMemoryStore(), { ...makePlan(N, 'wide'), id: 'stub-mem' }, trivial, {}, stub)
    r.stubMem.push(((now() - t2) * 1000) / N)
    const task = (i: number) => ({
      kind: 'code' as const,
      selfTimed: true as const,
      code: 'return subtask.id',
      args: { state: {}, subtask: { id: `t${i}` } },
      trackState: true,
      where: { subtask: `t${i}` },
    })
    t = now()
    for (let i = 0; i < N; i++) await pool.run(task(i))
    r.rawSeq.push(((now() - t) * 1000) / N)
    t = now()
    await Promise.all(Array.from({ length: N }, (_, i) => pool.run(task(i))))
    r.rawPar.push(((now() - t) * 1000) / N)
    await pool.close()
  }
  console.log(
    `\n## overhead per subtask, ${N} subtasks, trivial run: executor, LMDB checkpoint per subtask (µs, median (min–max) of ${ROUNDS})`,
  )
  console.log(`| case | plan.execute | raw tinypool round trip, same code task | plan − raw |`)
  console.log(`|---|---|---|---|`)
  console.log(
    `| chain (each waits for the previous: latency), warm pool | ${fmt(r.chain)} | ${fmt(r.rawSeq)} sequential | ${(median(r.chain) - median(r.rawSeq)).toFixed(1)} |`,
  )
  console.log(
    `| ${N} independent, max_concurrent 2 (throughput), warm pool | ${fmt(r.wide)} | ${fmt(r.rawPar)} all at once | ${(median(r.wide) - median(r.rawPar)).toFixed(1)} |`,
  )
  console.log(`| ${N} independent, pool started by plan.execute | ${fmt(r.cold)} | | |`)
  console.log(`| ${N} independent, pool replaced by an in-thread stub (scheduler + LMDB checkpoint only) | ${fmt(r.stubWide)} | | |`)
  console.log(`| same, memory store (scheduler only) | ${fmt(r.stubMem)} | | |`)
  console.log(`\npool start (2 workers, until both answered): ${fmt(r.start)} ms`)
}

function spinSource(): string {
  return 'let x = 0; for (let i = 0; i < state.iters; i++) x = (x * 31 + i) | 0; return x'
}

function calibrate(targetMs: number): number {
  const spin = new Function('state', spinSource()) as (s: { iters: number }) => number
  let iters = 100_000
  for (;;) {
    const t = now()
    spin({ iters })
    const ms = now() - t
    if (ms > 20) return Math.round((iters * targetMs) / ms)
    iters *= 2
  }
}

async function speedup(): Promise<void> {
  const N = 100
  const iters = calibrate(5)
  const spin = new Function('state', spinSource()) as (s: { iters: number }) => number
  const c1: number[] = []
  const c2: number[] = []
  const serial: number[] = []
  const raw1: number[] = []
  const raw2: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    let t = now()
    for (let i = 0; i < N; i++) spin({ iters })
    serial.push(now() - t)
    await withStore(async (store) => {
      for (const [mc, out] of [
        [1, c1],
        [2, c2],
      ] as const) {
        const pool = await warmPool(mc)
        const t0 = now()
        const res = await runPlan(
          store,
          { ...makePlan(N, 'wide'), id: `cpu_${mc}_${r}` },
          { subtask_executor: { run: spinSource() }, max_concurrent: mc },
          { iters },
          pool,
        )
        await pool.close()
        out.push(now() - t0)
        if (res.success !== true) throw new Error('cpu plan failed')
      }
    })
    // The machine's own ceiling in the same moment: the same code tasks straight through tinypool, all at once.
    for (const [threads, out] of [
      [1, raw1],
      [2, raw2],
    ] as const) {
      const pool = await warmPool(threads)
      const t0 = now()
      await Promise.all(
        Array.from({ length: N }, () => pool.run({ kind: 'code', selfTimed: true, code: spinSource(), args: { state: { iters } } })),
      )
      out.push(now() - t0)
      await pool.close()
    }
  }
  const lg = langGraphFanOut(N, iters, ROUNDS)
  console.log(
    `\n## CPU-bound speedup: ${N} subtasks of ~5 ms (${iters} iterations), ${availableParallelism()} cores (ms wall, median (min–max) of ${ROUNDS})`,
  )
  console.log(`| case | wall ms | vs max_concurrent 1 |`)
  console.log(`|---|---|---|`)
  console.log(`| main thread, serial loop | ${fmt(serial)} | ${(median(c1) / median(serial)).toFixed(2)}× faster |`)
  console.log(`| plan.execute max_concurrent 1 | ${fmt(c1)} | 1 |`)
  console.log(`| plan.execute max_concurrent 2 | ${fmt(c2)} | **${(median(c1) / median(c2)).toFixed(2)}×** |`)
  console.log(`| LangGraph.js Send fan-out (${N} branches, main thread) | ${fmt(lg)} | ${(median(c1) / median(lg)).toFixed(2)}× |`)
  console.log(`| raw tinypool, 1 thread, all queued at once | ${fmt(raw1)} | ${(median(c1) / median(raw1)).toFixed(2)}× |`)
  console.log(
    `| raw tinypool, 2 threads, all queued at once | ${fmt(raw2)} | ${(median(c1) / median(raw2)).toFixed(2)}× (raw 2 vs 1: ${(median(raw1) / median(raw2)).toFixed(2)}×) |`,
  )
  console.log(
    `\nload average while measuring: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  )
}

/** The same work as a LangGraph.js fan-out, measured in a child process (see plan-langgraph.ts for why). */
function langGraphFanOut(n: number, iters: number, rounds: number): number[] {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'plan-langgraph.ts')
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, String(n), String(iters), String(rounds)], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`plan-langgraph.ts failed: ${r.stderr}`)
  return JSON.parse(r.stdout.trim()) as number[]
}

async function bytes(): Promise<void> {
  console.log(`\n## plan checkpoint bytes, plans executed end to end (\`plans\` database: keys + values)`)
  console.log(`| subtasks | held, full | held, bare (no text, null results) | beyond text+results per subtask | upstream claim |`)
  console.log(`|---|---|---|---|---|`)
  for (const n of [100, 10_000]) {
    const full = await planBytes(n, false)
    const bare = await planBytes(n, true)
    console.log(
      `| ${n} | ${full.toLocaleString('en')} B (${(full / 1024).toFixed(1)} KB) | ${bare.toLocaleString('en')} B | ${(bare / n).toFixed(1)} B | ~100 B/subtask, < 1 MB for 100 |`,
    )
  }
}

async function planBytes(n: number, bare: boolean): Promise<number> {
  return withStore(async (store, dir) => {
    const plan = makePlan(n, 'chain', (i) => (bare ? '' : `Check pump ${i} and log its pressure reading`))
    const pool = await warmPool(2)
    const res = await runPlan(
      store,
      plan,
      { subtask_executor: { run: bare ? 'return null' : 'return { ok: true, pressure: 2.4 }' }, max_concurrent: 2 },
      {},
      pool,
    )
    await pool.close()
    if (res.success !== true) throw new Error('bytes plan failed')
    await store.flush()
    const raw = _openRawDb(dir, 'plans')
    const held = raw.bytes()
    await raw.close()
    return held
  })
}

console.log(`# plan.bench — ${new Date().toISOString()} — node ${process.version}, ${availableParallelism()} cores`)
if (!ONLY || ONLY === 'overhead') await overhead()
if (!ONLY || ONLY === 'speedup') await speedup()
if (!ONLY || ONLY === 'bytes') await bytes()
