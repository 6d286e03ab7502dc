/**
 * Two real processes on one data dir: one routes 500 messages (leases, status updates with transitions, completion
 * reports), the other runs the scheduler's stale-heartbeat recovery in a loop. Afterwards every task is in exactly
 * one folder, every logged transition is allowed by the table and chains from the previous one, every accepted
 * Work Log entry is in its task, every event id is unique, and lint is clean.
 */

import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  TASK_STATUSES,
  createTask,
  getTask,
  isValidTransition,
  lintDataDir,
  readEvents,
  workLogEntries,
} from '../../../../src/aof/index.ts'
import type { TaskStatus } from '../../../../src/aof/index.ts'
import { fixture } from '../../helpers.ts'

const SCRIPT = resolve(import.meta.dirname, 'fixtures/two-process.ts')

function runNode(args: string[]): { done: Promise<{ code: number | null; out: string; err: string }>; kill(): void } {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const safety = setTimeout(() => child.kill('SIGKILL'), 120_000)
  const done = new Promise<{ code: number | null; out: string; err: string }>((res) =>
    child.on('close', (code) => {
      clearTimeout(safety)
      res({ code, out, err })
    }),
  )
  return { done, kill: () => child.kill('SIGKILL') }
}

test('two processes (router: 500 messages, poller) on one data dir: no lost update, no invalid transition', async () => {
  const f = fixture()
  // Real time: both processes use the wall clock.
  f.ctx.now = () => new Date()
  const procs: Array<ReturnType<typeof runNode>> = []
  try {
    const ids: string[] = []
    for (let i = 0; i < 12; i++) ids.push((await createTask(f.ctx, { title: `t${i}`, agent: 'swe', status: 'ready' })).id)
    const poller = runNode(['poller', f.dir])
    const router = runNode(['router', f.dir, ids.join(','), '500'])
    procs.push(poller, router)
    const r = await router.done
    const p = await poller.done
    assert.is(r.code, 0, r.err)
    assert.is(p.code, 0, p.err)
    const summary = JSON.parse(r.out) as { accepted: Record<string, string[]>; outcomes: Record<string, number>; leases: number }
    const polled = JSON.parse(p.out) as { polls: number; reclaimed: number }
    assert.is(
      Object.values(summary.outcomes).reduce((a, b) => a + b, 0),
      500,
    )

    // Every task in exactly one folder.
    for (const id of ids) {
      const where = TASK_STATUSES.filter((s) => existsSync(join(f.dir, 'tasks', s, `${id}.md`)))
      assert.is(where.length, 1, `${id} is in ${where.join(', ') || 'no folder'}`)
    }
    // No temp files left behind.
    for (const s of TASK_STATUSES) {
      const dir = join(f.dir, 'tasks', s)
      if (existsSync(dir))
        assert.equal(
          readdirSync(dir).filter((n) => n.startsWith('.')),
          [],
          s,
        )
    }

    // Every transition allowed and chained; the last one matches the folder.
    const events = readEvents(f.ctx)
    assert.is(new Set(events.map((e) => e.eventId)).size, events.length, 'event ids are unique')
    for (const id of ids) {
      let status: TaskStatus = 'ready'
      for (const e of events.filter((x) => x.taskId === id && x.type === 'task.transitioned')) {
        const { from, to } = e.payload as { from: TaskStatus; to: TaskStatus }
        assert.is(from, status, `${id}: transition from ${from} but the task was ${status}`)
        assert.ok(isValidTransition(from, to), `${id}: ${from} -> ${to}`)
        status = to
      }
      const task = (await getTask(f.ctx, id))!
      assert.is(task.status, status, id)
      // No Work Log entry lost.
      const entries = workLogEntries(task.body).join('\n')
      for (const note of summary.accepted[id] ?? []) assert.ok(entries.includes(`Notes: ${note}`), `${id} lost ${note}`)
    }
    const received = events.filter((e) => e.type === 'protocol.message.received').length
    const rejectedForTask = Object.entries(summary.outcomes)
      .filter(([k]) => k.startsWith('accepted') || /unauthorized|unassigned|stale_run/.test(k))
      .reduce((a, [, n]) => a + n, 0)
    assert.is(received, rejectedForTask, 'one received event per message that reached its handler')
    assert.equal(lintDataDir(f.ctx), [])
    assert.ok(polled.polls > 0)
    if (process.env.AOF_DEBUG) console.log(summary.outcomes, polled, summary.leases)
  } finally {
    for (const p of procs) p.kill()
    f.cleanup()
  }
})

test.run()
