import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  acquireLease,
  checkStaleHeartbeats,
  getTask,
  heartbeat,
  markRunArtifactExpired,
  poll,
  readRun,
  readRunResult,
  transitionTask,
  writeRunResult,
} from '../../src/aof/index.ts'
import type { Outcome } from '../../src/aof/index.ts'
import { T1, T2, T3, eventsOf, fixture, makeTask, withFixture, type Fixture } from './helpers.ts'

type F = Fixture

function writeHeartbeatRaw(f: F, id: string, body: Record<string, unknown>) {
  mkdirSync(join(f.dir, 'state', 'runs', id), { recursive: true })
  writeFileSync(join(f.dir, 'state', 'runs', id, 'run_heartbeat.json'), JSON.stringify(body))
}

/** An in-progress task whose heartbeat (5 min TTL, written at 10:00) is stale at 10:05, with an optional result. */
async function staleTask(f: F, id: string, outcome?: Outcome, metadata: Record<string, unknown> = {}) {
  f.setNow('2026-02-10T10:00:00.000Z')
  await makeTask(f.ctx, { id, metadata })
  if (outcome) {
    const run = readRun(f.ctx, id)!
    writeRunResult(f.ctx, {
      taskId: id,
      agentId: 'swe-backend',
      runId: run.runId!,
      completedAt: '2026-02-10T10:01:00.000Z',
      outcome,
      deliverables: [],
      blockers: outcome === 'blocked' ? ['Dependency not ready'] : [],
    })
  }
  f.setNow('2026-02-10T10:05:00.000Z')
}

const lastTransition = (f: F, id: string) => eventsOf(f.ctx, 'task.transitioned', id).at(-1)!

test(
  'AOF-BDD-75 Detect stale heartbeat with TTL expiry',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    writeHeartbeatRaw(f, T1, {
      taskId: T1,
      agentId: 'swe-backend',
      runId: readRun(f.ctx, T1)!.runId,
      lastHeartbeat: '2026-02-10T09:55:00.000Z',
      beatCount: 3,
      expiresAt: '2026-02-10T10:00:00.000Z',
    })
    f.setNow('2026-02-10T10:05:00.000Z')
    const stale = checkStaleHeartbeats(f.ctx, 300_000)
    assert.equal(
      stale.map((s) => s.taskId),
      [T1],
    )
    const result = await poll(f.ctx, { dryRun: true, heartbeatTtlMs: 300_000 })
    assert.equal(
      result.actions.map((a) => [a.type, a.taskId]),
      [['stale_heartbeat', T1]],
    )
  }),
)

test(
  'AOF-BDD-76 Heartbeat not stale if TTL not exceeded',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    writeHeartbeatRaw(f, T1, {
      taskId: T1,
      agentId: 'swe-backend',
      lastHeartbeat: '2026-02-10T10:05:00.000Z',
      expiresAt: '2026-02-10T10:10:00.000Z',
    })
    f.setNow('2026-02-10T10:05:00.000Z')
    assert.equal(checkStaleHeartbeats(f.ctx), [])
  }),
)

test(
  'AOF-BDD-77 Task with no heartbeat file is not flagged as stale',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const { rmSync } = await import('node:fs')
    rmSync(join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json'))
    f.setNow('2030-01-01T00:00:00.000Z')
    assert.equal(checkStaleHeartbeats(f.ctx), [])
  }),
)

test(
  'AOF-BDD-78 Stale heartbeat with no run_result.json reclaims task',
  withFixture(async (f) => {
    await staleTask(f, T1)
    const r = await poll(f.ctx)
    assert.is(r.actions[0]?.resolution, 'reclaimed')
    const task = (await getTask(f.ctx, T1))!
    assert.is(task.status, 'ready')
    assert.is(task.data.lease, undefined)
    assert.is(readRun(f.ctx, T1)?.status, 'failed')
    assert.equal([lastTransition(f, T1).to, lastTransition(f, T1).reason], ['ready', 'stale_heartbeat_reclaim'])
  }),
)

test(
  'AOF-BDD-79 Stale heartbeat with outcome=partial moves to review',
  withFixture(async (f) => {
    await staleTask(f, T1, 'partial')
    await poll(f.ctx)
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.equal([lastTransition(f, T1).to, lastTransition(f, T1).reason], ['review', 'stale_heartbeat_partial'])
  }),
)

test(
  'AOF-BDD-80 Stale heartbeat with outcome=needs_review moves to review',
  withFixture(async (f) => {
    await staleTask(f, T1, 'needs_review')
    await poll(f.ctx)
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.is(lastTransition(f, T1).reason, 'stale_heartbeat_needs_review')
  }),
)

test(
  'AOF-BDD-81 Stale heartbeat with outcome=blocked moves to blocked',
  withFixture(async (f) => {
    await staleTask(f, T1, 'blocked')
    await poll(f.ctx)
    assert.is((await getTask(f.ctx, T1))!.status, 'blocked')
    assert.equal([lastTransition(f, T1).to, lastTransition(f, T1).reason], ['blocked', 'stale_heartbeat_blocked: Dependency not ready'])
  }),
)

test(
  'AOF-BDD-82 Stale heartbeat with outcome=done and reviewRequired=false completes task',
  withFixture(async (f) => {
    await staleTask(f, T1, 'done', { reviewRequired: false })
    const r = await poll(f.ctx)
    assert.equal(r.actions[0]?.transitions, [
      { from: 'in-progress', to: 'review' },
      { from: 'review', to: 'done' },
    ])
    assert.is((await getTask(f.ctx, T1))!.status, 'done')
    assert.equal(
      eventsOf(f.ctx, 'task.transitioned', T1)
        .slice(-2)
        .map((p) => `${p.from}->${p.to}`),
      ['in-progress->review', 'review->done'],
    )
  }),
)

test(
  'AOF-BDD-83 Stale heartbeat with outcome=done and reviewRequired=true goes to review',
  withFixture(async (f) => {
    await staleTask(f, T1, 'done', { reviewRequired: true })
    await poll(f.ctx)
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.is(lastTransition(f, T1).reason, 'stale_heartbeat_done')
  }),
)

test(
  'AOF-BDD-84 Mark run artifact expired on reclaim',
  withFixture(async (f) => {
    await staleTask(f, T1)
    await poll(f.ctx)
    const run = readRun(f.ctx, T1)!
    assert.is(run.status, 'failed')
    assert.is(run.metadata.expiredAt, '2026-02-10T10:05:00.000Z')
  }),
)

test(
  'AOF-BDD-85 Expired artifact includes reason',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const run = markRunArtifactExpired(f.ctx, T1, 'stale_heartbeat')!
    assert.is(run.metadata.expiredReason, 'stale_heartbeat')
    assert.is(readRun(f.ctx, T1)?.status, 'failed')
    assert.is(markRunArtifactExpired(f.ctx, T2, 'stale_heartbeat'), undefined)
  }),
)

test(
  'AOF-BDD-86 Scheduler poll detects and processes stale heartbeats',
  withFixture(async (f) => {
    await staleTask(f, T1)
    const dry = await poll(f.ctx, { dryRun: true, heartbeatTtlMs: 300_000 })
    assert.equal(dry.actions, [{ type: 'stale_heartbeat', taskId: T1, agentId: 'swe-backend', runId: readRun(f.ctx, T1)!.runId! }])
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
    const wet = await poll(f.ctx, { heartbeatTtlMs: 300_000 })
    assert.is(wet.actions[0]?.resolution, 'reclaimed')
    assert.is((await getTask(f.ctx, T1))!.status, 'ready')
    assert.equal(
      eventsOf(f.ctx, 'scheduler.poll').map((p) => p.dryRun),
      [true, false],
    )
  }),
)

test(
  'AOF-BDD-87 Stale heartbeat action does not count as dispatch action',
  withFixture(async (f) => {
    await staleTask(f, T1)
    const r = await poll(f.ctx)
    assert.is(r.actionsPlanned, 1)
    assert.is(r.actionsExecuted, 0)
    assert.is(eventsOf(f.ctx, 'scheduler.poll')[0]?.actionsExecuted, 0)
  }),
)

test(
  'AOF-BDD-88 Multiple stale heartbeats processed independently',
  withFixture(async (f) => {
    await staleTask(f, T1, 'blocked')
    await staleTask(f, T2)
    await staleTask(f, T3, 'partial')
    const r = await poll(f.ctx)
    assert.is(r.actions.length, 3)
    assert.equal(
      [(await getTask(f.ctx, T1))!.status, (await getTask(f.ctx, T2))!.status, (await getTask(f.ctx, T3))!.status],
      ['blocked', 'ready', 'review'],
    )
  }),
)

test(
  'a heartbeat refreshed by a live run keeps the task from being reclaimed',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    f.setNow('2026-02-10T10:04:00.000Z')
    const hb = await heartbeat(f.ctx, T1, 'swe-backend')
    assert.is(hb.beatCount, 1)
    f.setNow('2026-02-10T10:06:00.000Z')
    assert.equal((await poll(f.ctx)).actions, [])
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
  }),
)

test(
  'a stale heartbeat never applies a run_result.json left by an earlier run: the task is reclaimed',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const firstRun = readRun(f.ctx, T1)!.runId!
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    f.setNow('2026-02-10T10:01:00.000Z')
    await acquireLease(f.ctx, T1, 'swe-backend')
    // The first run's result, arriving after the second run started (a new lease sets aside one already there).
    writeRunResult(f.ctx, {
      taskId: T1,
      agentId: 'swe-backend',
      runId: firstRun,
      completedAt: '2026-02-10T10:00:10.000Z',
      outcome: 'blocked',
      deliverables: [],
      blockers: ['old'],
    })
    f.setNow('2026-02-10T10:07:00.000Z')
    const r = await poll(f.ctx)
    assert.is(r.actions[0]?.resolution, 'reclaimed')
    assert.is((await getTask(f.ctx, T1))!.status, 'ready')
    assert.is(readRunResult(f.ctx, T1)?.runId, firstRun)
  }),
)

test(
  'the heartbeat TTL applies when a heartbeat has no expiresAt (the reference ignored it)',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    writeHeartbeatRaw(f, T1, { taskId: T1, agentId: 'swe-backend', lastHeartbeat: '2026-02-10T10:00:00.000Z' })
    f.setNow('2026-02-10T10:00:59.000Z')
    assert.equal(checkStaleHeartbeats(f.ctx, 60_000), [])
    f.setNow('2026-02-10T10:01:00.000Z')
    assert.equal(
      checkStaleHeartbeats(f.ctx, 60_000).map((s) => s.taskId),
      [T1],
    )
  }),
)

test(
  'an in-progress task without a heartbeat file whose lease expired is reclaimed (expired_lease)',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const { rmSync } = await import('node:fs')
    rmSync(join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json'))
    f.setNow('2026-02-10T10:09:59.000Z')
    assert.equal((await poll(f.ctx)).actions, [])
    f.setNow('2026-02-10T10:10:00.000Z')
    const r = await poll(f.ctx)
    assert.equal(r.actions, [
      {
        type: 'expired_lease',
        taskId: T1,
        agentId: 'swe-backend',
        runId: readRun(f.ctx, T1)!.runId,
        resolution: 'reclaimed',
        transitions: [{ from: 'in-progress', to: 'ready' }],
      },
    ])
    assert.is(r.leasesExpired, 1)
    assert.is((await getTask(f.ctx, T1))!.status, 'ready')
    assert.is(readRun(f.ctx, T1)?.metadata.expiredReason, 'lease_expired')
  }),
)

test.run()
