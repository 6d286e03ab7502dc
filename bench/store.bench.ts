/**
 * Store benchmark (SPEC §4: checkpoint cost per node, bytes per update, plan checkpoint bytes).
 * Run: npx tsx bench/store.bench.ts [--rounds N]    (results: bench/store.results.md)
 *
 * Everything runs against the real LMDB store in a temp dir on this machine's disk, so every commit is fsynced.
 * - latency: 2,000 sequential `appendStep`s of a 1-key update, each awaited before the next (what the engine does
 *   between nodes), vs the same 2,000 issued at once and awaited together (parallel subtasks; lmdb-js batches
 *   them into few transactions). Medians over rounds. The memory store is the no-disk reference.
 * - bytes: one 1-key update as stored (key + value); a 2,000-step run of a 48-byte state with the engine's rule
 *   (snapshot when updates outweigh it) and retention, against the same run written as a full snapshot per step
 *   with all history kept (what LangGraph's checkpointers do; the peer figure in research/perf-anchors.md is 26.8 MB
 *   for 1,000 steps of a 48 B state).
 * - plans: 100 and 10,000 subtasks in plan.execute's record format; overhead per subtask is measured by writing
 *   the same plan without descriptions and results.
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemoryStore } from '../src/store/memory-store.ts'
import { _openRawDb, openLmdbStore } from '../src/store/lmdb-store.ts'
import { snapshotDue } from '../src/store/records.ts'
import { headerRecord, planKey, subtaskRecord } from '../src/planning/checkpoint.ts'
import type { Plan, Subtask } from '../src/planning/types.ts'
import type { Store } from '../src/store/types.ts'

const N = 2000
const argRounds = process.argv.indexOf('--rounds')
const ROUNDS = argRounds > 0 ? Number(process.argv[argRounds + 1]) : 5
const RUN_ID = '01jd3k5m7qabcdefgh' // the shape of a real run id (18 chars)

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]!
}
const fmt = (xs: number[]): string => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'tea-store-bench-'))
}

const step = (i: number) => ({ step: i, node: 'count', update: { count: i }, cursor: { next: 'count' } })

async function sequential(store: Store, runId: string): Promise<number> {
  const t = process.hrtime.bigint()
  for (let i = 1; i <= N; i++) await store.appendStep(runId, step(i))
  return Number(process.hrtime.bigint() - t) / 1e3 / N
}

async function pipelined(store: Store, runId: string): Promise<number> {
  const t = process.hrtime.bigint()
  const writes: Promise<void>[] = []
  for (let i = 1; i <= N; i++) writes.push(store.appendStep(runId, step(i)))
  await Promise.all(writes)
  return Number(process.hrtime.bigint() - t) / 1e3 / N
}

async function latency(): Promise<void> {
  const r = { lmdbSeq: [] as number[], lmdbPipe: [] as number[], memSeq: [] as number[], memPipe: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    const dir = tempDir()
    const lmdb = openLmdbStore(dir)
    const mem = createMemoryStore()
    await lmdb.snapshot('warm', { step: 0, node: null, state: { count: 0 }, cursor: { next: 'count' } })
    await sequential(lmdb, 'warm')
    r.lmdbSeq.push(await sequential(lmdb, `seq${round}`))
    r.lmdbPipe.push(await pipelined(lmdb, `pipe${round}`))
    r.memSeq.push(await sequential(mem, `seq${round}`))
    r.memPipe.push(await pipelined(mem, `pipe${round}`))
    await lmdb.close()
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`\n## checkpoint latency, µs per appendStep of a 1-key update (median (min–max) of ${ROUNDS} rounds × ${N})`)
  console.log(`lmdb, awaited one by one (durable commit each) ${fmt(r.lmdbSeq)}`)
  console.log(`lmdb, ${N} issued at once, awaited together   ${fmt(r.lmdbPipe)}`)
  console.log(`memory store, awaited one by one             ${fmt(r.memSeq)}`)
  console.log(`memory store, issued at once                 ${fmt(r.memPipe)}`)
}

interface RunFigures {
  written: number
  snapshots: number
  held: number
  pages: number
  file: number
  usPerStep: number
  loadUs: number
}

/** A run of N steps, each a 1-key update, checkpointed by the engine's rule with retention (keep 3). */
async function incremental(initial: Record<string, unknown>): Promise<RunFigures> {
  const state = { ...initial }
  const dir = tempDir()
  const store = openLmdbStore(dir)
  await store.snapshot(RUN_ID, { step: 0, node: null, state, cursor: { next: 'count' } })
  let written = store.checkpointStats(RUN_ID).snapshotBytes
  let snapshots = 1
  const t = process.hrtime.bigint()
  for (let i = 1; i <= N; i++) {
    state.count = i
    const stats = store.checkpointStats(RUN_ID)
    if (snapshotDue(stats)) {
      await store.snapshot(RUN_ID, { step: i, node: 'count', state, cursor: { next: 'count' } })
      snapshots++
    } else await store.appendStep(RUN_ID, step(i))
    const after = store.checkpointStats(RUN_ID)
    written += after.updates === 0 ? after.snapshotBytes : after.updateBytes - stats.updateBytes
  }
  const usPerStep = Number(process.hrtime.bigint() - t) / 1e3 / N
  const held = await store.checkpointBytes(RUN_ID)
  const tl = process.hrtime.bigint()
  const loaded = await store.loadLatest(RUN_ID)
  const loadUs = Number(process.hrtime.bigint() - tl) / 1e3
  if (loaded?.state.count !== N) throw new Error(`replay gave count ${String(loaded?.state.count)}`)
  await store.close()
  const raw = _openRawDb(dir, 'checkpoints')
  const pages = raw.pageBytes()
  await raw.close()
  const file = statSync(join(dir, 'tea.lmdb')).size
  rmSync(dir, { recursive: true, force: true })
  return { written, snapshots, held, pages, file, usPerStep, loadUs }
}

/** The same run written as a full snapshot per step with every snapshot kept (the LangGraph way). */
async function fullPerStep(initial: Record<string, unknown>): Promise<{ held: number; file: number }> {
  const state = { ...initial }
  const dir = tempDir()
  const store = openLmdbStore(dir)
  const writes: Promise<void>[] = []
  for (let i = 0; i <= N; i++) {
    state.count = i
    writes.push(store.snapshot(RUN_ID, { step: i, node: 'count', state: { ...state }, cursor: { next: 'count' } }, N + 1))
  }
  await Promise.all(writes)
  const held = await store.checkpointBytes(RUN_ID)
  await store.close()
  const file = statSync(join(dir, 'tea.lmdb')).size
  rmSync(dir, { recursive: true, force: true })
  return { held, file }
}

async function runBytes(): Promise<void> {
  console.log(`\n## bytes`)
  const dir = tempDir()
  const store = openLmdbStore(dir)
  await store.snapshot(RUN_ID, { step: 0, node: null, state: { count: 0, text: 'x'.repeat(500) }, cursor: { next: 'count' } })
  await store.appendStep(RUN_ID, step(1))
  const one = store.checkpointStats(RUN_ID).updateBytes
  await store.appendStep(RUN_ID, {
    step: 2,
    node: 'summarise',
    update: { summary: 'The pump pressure is nominal.' },
    cursor: { next: 'publish' },
  })
  const two = store.checkpointStats(RUN_ID).updateBytes - one
  await store.close()
  rmSync(dir, { recursive: true, force: true })
  console.log(`1-key update {count: 1}: ${one} B; {summary: <29 chars>}: ${two} B (key + value as stored; LMDB adds ~10 B per record)`)

  const states: Array<[string, Record<string, unknown>]> = [
    ['small', { count: 0, msg: 'hello board', ok: true, t: 21.5 }],
    ['2 KB', { count: 0, notes: 'n'.repeat(2000), ok: true }],
  ]
  for (const [name, s] of states) {
    const json = Buffer.byteLength(JSON.stringify(s))
    const inc = await incremental(s)
    const full = await fullPerStep(s)
    console.log(
      `${name} state (${json} B JSON), ${N} steps of a 1-key update: incremental wrote ${inc.written} B ` +
        `(${(inc.written / N).toFixed(1)} B/step, ${inc.snapshots} snapshots), holds ${inc.held} B after retention, ` +
        `checkpoints db ${inc.pages} B of pages, tea.lmdb ${inc.file} B; ${inc.usPerStep.toFixed(1)} µs/step awaited; ` +
        `loadLatest ${inc.loadUs.toFixed(0)} µs`,
    )
    console.log(
      `  full snapshot per step, all kept: ${full.held} B (${(full.held / N).toFixed(1)} B/step), tea.lmdb ${full.file} B` +
        ` = ${(full.held / inc.written).toFixed(1)}× the bytes incremental wrote, ${(full.held / inc.held).toFixed(0)}× what it holds`,
    )
  }
}

/**
 * Bytes held by a plan of n subtasks in plan.execute's own format (src/planning/checkpoint.ts): the header holds
 * the plan's structure once, and each finished subtask writes one small record `{s, r}`. `bare` writes the same
 * plan with empty descriptions and no results: what remains is exactly the cost beyond the subtasks' own text and
 * results (keys, ids, dependencies, status codes, record headers, the plan counter, shared structures).
 */
async function planBytes(n: number, bare: boolean): Promise<{ held: number; pages: number; us: number }> {
  const dir = tempDir()
  const store = openLmdbStore(dir)
  const ids = Array.from({ length: n }, (_, i) => `t${i + 1}`)
  const subtasks: Subtask[] = ids.map((id, i) => ({
    id,
    description: bare ? '' : `Inspect pump ${String(i).padStart(5, '0')} and log its pressure`,
    dependencies: ids.slice(Math.max(0, i - 2), i),
    status: 'pending',
  }))
  const plan: Plan = {
    id: 'plan-1',
    goal: 'Service the plant room',
    strategy: 'flat',
    subtasks,
    replan_count: 0,
    max_replans: 2,
    created_at: 1_763_000_000_000,
  }
  const key = planKey('maintain', plan.id)
  await store.putPlanHeader(RUN_ID, key, headerRecord(plan))
  const t = process.hrtime.bigint()
  await Promise.all(
    subtasks.map((s, i) => {
      const done: Subtask = { ...s, status: 'completed', attempts: 1, ...(bare ? {} : { result: { ok: true, pressure: 1.5 + i / 1000 } }) }
      return store.putSubtask(RUN_ID, key, s.id, subtaskRecord(done))
    }),
  )
  const us = Number(process.hrtime.bigint() - t) / 1e3 / n
  await store.close()
  const raw = _openRawDb(dir, 'plans')
  const held = raw.bytes() // everything in the plans db: header, subtasks, plan counter, shared structures
  const pages = raw.pageBytes()
  await raw.close()
  rmSync(dir, { recursive: true, force: true })
  return { held, pages, us }
}

async function plans(): Promise<void> {
  console.log(`\n## plans (plan.execute's records; ids t1…tN, ≤ 2 dependencies, 45-char descriptions, result {ok, pressure})`)
  for (const n of [100, 10_000]) {
    const full = await planBytes(n, false)
    const bare = await planBytes(n, true)
    console.log(
      `${n} subtasks: ${full.held} B held (key + value; ${(full.held / n).toFixed(1)} B/subtask), ` +
        `${full.pages} B of LMDB pages; beyond description and result ${(bare.held / n).toFixed(1)} B/subtask; ` +
        `${full.us.toFixed(1)} µs per putSubtask issued at once`,
    )
  }
}

console.log(
  `node ${process.version} ${process.arch}; ${new Date().toISOString()}; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
await latency()
await runBytes()
await plans()
