/**
 * AOF/1 throughput: messages routed per second (completion reports, status updates) and scheduler poll time over
 * 1,000 and 10,000 tasks. Run: `node --import tsx bench/aof.bench.ts [--quick]`. Prints a markdown table of
 * medians. Everything happens in a temp dir on the local disk; every write is durable (fsync), as in production:
 * a status update costs one durable write (the task file), a completion report three (run_result.json, the moved
 * task file, run.json), so on a slow disk the fsync row bounds the others.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { aofContext, poll, routeMessage } from '../src/aof/index.ts'
import type { AofContext } from '../src/aof/index.ts'
import { stringifyFrontmatter } from '../src/aof/protocol/frontmatter.ts'

const quick = process.argv.includes('--quick')
const REPEATS = quick ? 3 : 5

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

function id(i: number): string {
  return `TASK-2026-02-10-${String(i % 1000).padStart(3, '0')}-${String(Math.floor(i / 1000)).padStart(2, '0')}`
}

/** Writes `n` in-progress tasks with a lease, a run and a live heartbeat, straight to disk (setup, not measured). */
function seed(dir: string, n: number, runStart: string): string[] {
  const ids: string[] = []
  const folder = join(dir, 'tasks', 'in-progress')
  mkdirSync(folder, { recursive: true })
  for (let i = 0; i < n; i++) {
    const tid = id(i)
    ids.push(tid)
    const data = {
      schemaVersion: 1,
      id: tid,
      title: `bench ${i}`,
      status: 'in-progress',
      priority: 'normal',
      routing: { agent: 'swe', tags: [] },
      lease: { agent: 'swe', acquiredAt: runStart, expiresAt: '2099-01-01T00:00:00.000Z', renewCount: 0 },
      createdAt: runStart,
      updatedAt: runStart,
      lastTransitionAt: runStart,
      createdBy: 'bench',
      dependsOn: [],
      metadata: {},
    }
    writeFileSync(join(folder, `${tid}.md`), stringifyFrontmatter(data, '## Instructions\nBench task.'))
    const runDir = join(dir, 'runs', tid)
    mkdirSync(runDir, { recursive: true })
    writeFileSync(
      join(runDir, 'run.json'),
      JSON.stringify({ taskId: tid, agentId: 'swe', runId: `run${i}`, startedAt: runStart, status: 'running' }),
    )
    writeFileSync(
      join(runDir, 'run_heartbeat.json'),
      JSON.stringify({
        taskId: tid,
        agentId: 'swe',
        runId: `run${i}`,
        lastHeartbeat: runStart,
        beatCount: 0,
        expiresAt: '2099-01-01T00:00:00.000Z',
      }),
    )
  }
  return ids
}

function envelope(type: string, taskId: string, payload: Record<string, unknown>, sentAt: string) {
  return { protocol: 'aof', version: 1, type, taskId, fromAgent: 'swe', toAgent: 'orch', sentAt, payload }
}

async function withDir<T>(fn: (dir: string, ctx: AofContext) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-aof-bench-'))
  try {
    return await fn(dir, aofContext(dir))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function completionRate(n: number): Promise<number> {
  return withDir(async (dir, ctx) => {
    const ids = seed(dir, n, '2026-02-10T10:00:00.000Z')
    const t0 = performance.now()
    for (const tid of ids) {
      const out = await routeMessage(
        ctx,
        envelope(
          'completion.report',
          tid,
          { outcome: 'done', summaryRef: '', tests: { total: 1, passed: 1, failed: 0 }, notes: 'ok' },
          '2026-02-10T10:01:00.000Z',
        ),
      )
      if (out.outcome !== 'accepted') throw new Error(`bench: ${JSON.stringify(out)}`)
    }
    return n / ((performance.now() - t0) / 1000)
  })
}

async function statusRate(n: number, tasks: number): Promise<number> {
  return withDir(async (dir, ctx) => {
    const ids = seed(dir, tasks, '2026-02-10T10:00:00.000Z')
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      const tid = ids[i % ids.length]!
      const sentAt = new Date(Date.UTC(2026, 1, 10, 11, 0, 0, i)).toISOString()
      const out = await routeMessage(ctx, envelope('status.update', tid, { taskId: tid, agentId: 'swe', progress: `step ${i}` }, sentAt))
      if (out.outcome !== 'accepted') throw new Error(`bench: ${JSON.stringify(out)}`)
    }
    return n / ((performance.now() - t0) / 1000)
  })
}

async function pollMs(n: number): Promise<number[]> {
  return withDir(async (dir, ctx) => {
    seed(dir, n, '2026-02-10T10:00:00.000Z')
    const times: number[] = []
    for (let r = 0; r < REPEATS; r++) {
      const t0 = performance.now()
      const result = await poll(ctx, { dryRun: true })
      times.push(performance.now() - t0)
      if (result.tasksEvaluated !== n) throw new Error(`bench: poll saw ${result.tasksEvaluated} of ${n}`)
    }
    return times
  })
}

/** The floor under every routed message: one durable write (temp file, fsync, rename) on this disk. */
async function durableWriteMs(): Promise<number> {
  return withDir(async (dir) => {
    const { writeFileAtomic } = await import('../src/aof/store/fs/fs-atomic.ts')
    const times: number[] = []
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now()
      writeFileAtomic(join(dir, 'probe.md'), 'x'.repeat(600))
      times.push(performance.now() - t0)
    }
    return median(times)
  })
}

async function main(): Promise<void> {
  const rows: string[][] = []
  const floor = await durableWriteMs()
  rows.push([
    'one durable file write (temp + fsync + rename), for scale',
    `${floor.toFixed(2)} ms`,
    `${(1000 / floor).toFixed(0)} writes/s`,
  ])
  const msgs = quick ? 300 : 1000
  const c = []
  const s = []
  for (let r = 0; r < REPEATS; r++) {
    c.push(await completionRate(msgs))
    s.push(await statusRate(msgs, 100))
  }
  rows.push([
    `completion.report routed (${msgs} tasks, each in-progress → review)`,
    `${median(c).toFixed(0)} msg/s`,
    `${(1000 / median(c)).toFixed(2)} ms/msg`,
  ])
  rows.push([
    `status.update routed (${msgs} messages over 100 tasks, Work Log append)`,
    `${median(s).toFixed(0)} msg/s`,
    `${(1000 / median(s)).toFixed(2)} ms/msg`,
  ])
  for (const n of quick ? [1000] : [1000, 10_000]) {
    const t = median(await pollMs(n))
    rows.push([
      `poll (stale-heartbeat scan), ${n.toLocaleString('en')} in-progress tasks`,
      `${t.toFixed(1)} ms`,
      `${((t * 1000) / n).toFixed(1)} µs/task`,
    ])
  }
  process.stdout.write(
    `AOF/1 bench — node ${process.version}, ${REPEATS} repeats, medians\n\n| measure | median | per item |\n|---|---|---|\n`,
  )
  for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`)
}

void main()
