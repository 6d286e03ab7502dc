/**
 * AOF-BDD scenarios of the scheduler (TASK-061: stale heartbeats found and recovered, with or without a result of
 * the run, runs marked expired, the poll's counts). A test cannot set a NATS server's clock, so "current time is
 * 10:05 and the heartbeat expired at 10:00" is a heartbeat whose `expiresAt` lies five minutes before the store's
 * now (bdd-fixtures.ts `heartbeatAt`), and a short TTL is waited out by the store's clock. Run by bdd-contract.ts.
 */

import { schedulerPass } from '../../../src/aof/roles/scheduler-pass.ts'
import * as assert from 'uvu/assert'
import { readRunResultOn } from '../../../src/aof/roles/run-files.ts'
import { taskLease } from '../../../src/aof/protocol/task-file.ts'
import {
  AGENT,
  type BddSuite,
  eventsOf,
  given,
  heartbeatAt,
  lastMove,
  movesOf,
  resultOfRun,
  staleTask,
  statusOf,
  untilPast,
} from './bdd-fixtures.ts'
import { T1, T2, T3 } from '../helpers.ts'

const TTL = { heartbeatTtlMs: 300_000 }

export function schedulerCases(t: BddSuite): void {
  // --- Stale Heartbeat Detection ---

  t('AOF-BDD-75 TASK-061 Detect stale heartbeat with TTL expiry', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await heartbeatAt(store, T1, -300_000)
    const dry = await schedulerPass(store, { dryRun: true, ...TTL })
    assert.equal(
      dry.actions.map((a) => [a.type, a.taskId, a.agentId]),
      [['stale_heartbeat', T1, AGENT]],
    )
    assert.is(dry.staleHeartbeats, 1)
    assert.is(await statusOf(store, T1), 'in-progress', 'a dry run changes nothing')
  })

  t('AOF-BDD-76 TASK-061 Heartbeat not stale if TTL not exceeded', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await heartbeatAt(store, T1, 300_000, 0)
    const dry = await schedulerPass(store, { dryRun: true, ...TTL })
    assert.equal([dry.actions, dry.staleHeartbeats], [[], 0])
  })

  t('AOF-BDD-77 TASK-061 Task with no heartbeat file is not flagged as stale', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2)
    await store.writeRunFile(T1, 'run_heartbeat.json', undefined)
    await store.writeRunFile(T2, 'run_heartbeat.json', undefined)
    // Long past any heartbeat TTL: without a heartbeat only the lease can make T1 recoverable, and it is live.
    const dry = await schedulerPass(store, { dryRun: true, heartbeatTtlMs: 1 })
    assert.equal([dry.actions, dry.staleHeartbeats], [[], 0])
  })

  // --- Stale Heartbeat Recovery with run_result.json ---

  t('AOF-BDD-78 TASK-061 Stale heartbeat with no run_result.json reclaims task', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1)
    const r = await schedulerPass(store, TTL)
    assert.equal(
      r.actions.map((a) => [a.type, a.taskId, a.resolution, a.transitions]),
      [['stale_heartbeat', T1, 'reclaimed', [{ from: 'in-progress', to: 'ready' }]]],
    )
    const task = (await store.get(T1))!
    assert.is(task.status, 'ready')
    assert.is(task.data.lease, undefined)
    assert.is((await store.readRun(T1))?.status, 'failed', 'the run artifact is marked expired')
    const last = await lastMove(store, T1)
    assert.equal([last?.to, last?.reason], ['ready', 'stale_heartbeat_reclaim'])
  })

  t('AOF-BDD-79 TASK-061 Stale heartbeat with outcome=partial moves to review', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1, 'partial')
    const r = await schedulerPass(store, TTL)
    assert.equal(
      r.actions.map((a) => [a.resolution, a.outcome]),
      [['applied_result', 'partial']],
    )
    assert.is(await statusOf(store, T1), 'review')
    const last = await lastMove(store, T1)
    assert.equal([last?.to, last?.reason], ['review', 'stale_heartbeat_partial'])
  })

  t('AOF-BDD-80 TASK-061 Stale heartbeat with outcome=needs_review moves to review', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1, 'needs_review')
    await schedulerPass(store, TTL)
    assert.is(await statusOf(store, T1), 'review')
    assert.is((await lastMove(store, T1))?.reason, 'stale_heartbeat_needs_review')
  })

  t('AOF-BDD-81 TASK-061 Stale heartbeat with outcome=blocked moves to blocked', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1, 'blocked')
    await schedulerPass(store, TTL)
    assert.is(await statusOf(store, T1), 'blocked')
    const last = await lastMove(store, T1)
    assert.equal([last?.to, last?.reason], ['blocked', 'stale_heartbeat_blocked: Dependency not ready'])
  })

  t('AOF-BDD-82 TASK-061 Stale heartbeat with outcome=done and reviewRequired=false completes task', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1, 'done', { reviewRequired: false })
    const r = await schedulerPass(store, TTL)
    assert.equal(r.actions[0]?.transitions, [
      { from: 'in-progress', to: 'review' },
      { from: 'review', to: 'done' },
    ])
    assert.is(await statusOf(store, T1), 'done')
    assert.equal((await movesOf(store, T1)).slice(-2), ['in-progress->review', 'review->done'])
  })

  t('AOF-BDD-83 TASK-061 Stale heartbeat with outcome=done and reviewRequired=true goes to review', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1, 'done', { reviewRequired: true })
    await schedulerPass(store, TTL)
    assert.is(await statusOf(store, T1), 'review')
    assert.is((await lastMove(store, T1))?.reason, 'stale_heartbeat_done')
  })

  // --- Run Artifact Expiry ---

  t('AOF-BDD-84 TASK-061 Mark run artifact expired on reclaim', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1)
    const before = (await store.now()).getTime()
    await schedulerPass(store, TTL)
    const after = (await store.now()).getTime()
    const run = (await store.readRun(T1))!
    assert.is(run.status, 'failed')
    const expiredAt = Date.parse(String(run.metadata.expiredAt))
    assert.ok(expiredAt >= before && expiredAt <= after, `expiredAt ${run.metadata.expiredAt} is the reclaim's time`)
  })

  t('AOF-BDD-85 TASK-061 Expired artifact includes reason', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1)
    await schedulerPass(store, TTL)
    const run = (await store.readRun(T1))!
    assert.equal([run.status, run.metadata.expiredReason], ['failed', 'stale_heartbeat'])
  })

  // --- Scheduler Integration ---

  t('AOF-BDD-86 TASK-061 Scheduler poll detects and processes stale heartbeats', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1)
    const runId = (await store.readRun(T1))!.runId
    const dry = await schedulerPass(store, { dryRun: true, ...TTL })
    assert.equal(dry.actions, [{ type: 'stale_heartbeat', taskId: T1, agentId: AGENT, runId }])
    assert.is(await statusOf(store, T1), 'in-progress')
    const wet = await schedulerPass(store, TTL)
    assert.is(wet.actions[0]?.resolution, 'reclaimed')
    assert.is(await statusOf(store, T1), 'ready')
    assert.equal(
      (await eventsOf(store, 'scheduler.poll')).map((p) => p.dryRun),
      [true, false],
    )
  })

  t('AOF-BDD-87 TASK-061 Stale heartbeat action does not count as dispatch action', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1)
    const r = await schedulerPass(store, TTL)
    assert.equal([r.actionsPlanned, r.actionsExecuted, r.staleHeartbeats], [1, 0, 1])
    const [logged] = await eventsOf(store, 'scheduler.poll')
    assert.equal([logged?.actionsPlanned, logged?.actionsExecuted, logged?.staleHeartbeats], [1, 0, 1])
  })

  t('AOF-BDD-88 TASK-061 Multiple stale heartbeats processed independently', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1, 'blocked')
    await staleTask(store, T2)
    await staleTask(store, T3, 'partial')
    const r = await schedulerPass(store, TTL)
    assert.equal(r.actions.map((a) => [a.taskId, a.resolution]).sort(), [
      [T1, 'applied_result'],
      [T2, 'reclaimed'],
      [T3, 'applied_result'],
    ])
    assert.equal([await statusOf(store, T1), await statusOf(store, T2), await statusOf(store, T3)], ['blocked', 'ready', 'review'])
  })

  // --- edge cases beyond the BDD text ---

  t('a stale run whose result is applied by the scheduler is logged as completed once, with its run', async ({ h }) => {
    const { store } = h
    await staleTask(store, T1, 'partial')
    const runId = (await store.readRun(T1))!.runId
    await schedulerPass(store, TTL)
    assert.equal(await eventsOf(store, 'task.completed', T1), [{ outcome: 'partial', runId }])
    assert.is((await store.readRun(T1))?.status, 'completed')
    assert.equal((await schedulerPass(store, TTL)).actions, [], 'and not again')
  })

  t('a heartbeat refreshed by a live run keeps the task from being reclaimed', async ({ h }) => {
    const { store } = h
    await store.create({ id: T1, title: 'x', agent: AGENT, status: 'ready' })
    const lease = await store.lease(T1, AGENT, { ttlMs: 600_000, heartbeatTtlMs: 1 })
    await untilPast(store, lease.heartbeat.expiresAt!)
    const beat = await store.heartbeat(T1, AGENT, { ttlMs: 600_000 })
    assert.is(beat.beatCount, 1)
    assert.equal((await schedulerPass(store)).actions, [])
    assert.is(await statusOf(store, T1), 'in-progress')
  })

  t('a stale heartbeat never applies a run_result.json left by an earlier run: the task is reclaimed', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const firstRun = (await store.readRun(T1))!.runId!
    await store.transition(T1, 'ready', { actor: 'ops' })
    await store.lease(T1, AGENT)
    // The first run's result, arriving after the second run started (a new lease sets aside one already there).
    await resultOfRun(store, T1, 'blocked', { runId: firstRun })
    await heartbeatAt(store, T1, -300_000)
    const r = await schedulerPass(store, TTL)
    assert.equal(
      r.actions.map((a) => a.resolution),
      ['reclaimed'],
    )
    assert.is(await statusOf(store, T1), 'ready')
    assert.is((await readRunResultOn(store, T1))?.runId, firstRun, 'left where it was: the task is not in progress any more')
  })

  t('the heartbeat TTL applies when a heartbeat has no expiresAt (the reference ignored it)', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await heartbeatAt(store, T1, null, 120_000)
    assert.equal((await schedulerPass(store, { dryRun: true, heartbeatTtlMs: 600_000 })).actions, [])
    assert.equal(
      (await schedulerPass(store, { dryRun: true, heartbeatTtlMs: 60_000 })).actions.map((a) => [a.type, a.taskId]),
      [['stale_heartbeat', T1]],
    )
  })

  t('an in-progress task without a heartbeat whose lease expired is reclaimed (expired_lease)', async ({ h }) => {
    const { store } = h
    await store.create({ id: T1, title: 'x', agent: AGENT, status: 'ready' })
    const lease = await store.lease(T1, AGENT, { ttlMs: 1 })
    await store.writeRunFile(T1, 'run_heartbeat.json', undefined)
    await untilPast(store, taskLease(lease.task)!.expiresAt)
    const r = await schedulerPass(store)
    assert.equal(r.actions, [
      {
        type: 'expired_lease',
        taskId: T1,
        agentId: AGENT,
        runId: lease.run.runId,
        resolution: 'reclaimed',
        transitions: [{ from: 'in-progress', to: 'ready' }],
      },
    ])
    assert.equal([r.leasesExpired, r.staleHeartbeats], [1, 0])
    assert.is(await statusOf(store, T1), 'ready')
    const run = (await store.readRun(T1))!
    assert.equal([run.status, run.metadata.expiredReason], ['failed', 'lease_expired'])
    assert.equal([(await lastMove(store, T1))?.reason], ['lease_expired'])
  })

  t('the scheduler sets aside an earlier run’s result found beside a live run', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await resultOfRun(store, T1, 'blocked', { runId: 'OLD-RUN' })
    assert.is((await schedulerPass(store, { dryRun: true })).resultsSetAside, undefined, 'a dry run changes nothing')
    assert.match((await store.readRunFile(T1, 'run_result.json'))!, 'OLD-RUN')
    const r = await schedulerPass(store)
    assert.equal(r.resultsSetAside, [T1])
    assert.is(await store.readRunFile(T1, 'run_result.json'), undefined)
    assert.match((await store.readRunFile(T1, 'previous_run_result.json'))!, 'OLD-RUN')
    assert.is(await statusOf(store, T1), 'in-progress')
  })

  t('a poll counts every task in every status as evaluated, and logs its counts', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'done' })
    await store.create({ id: T3, title: 'later', status: 'backlog' })
    const r = await schedulerPass(store)
    assert.equal([r.tasksEvaluated, r.actionsPlanned, r.actionsExecuted], [3, 0, 0])
    assert.equal(await eventsOf(store, 'scheduler.poll'), [
      { dryRun: false, tasksEvaluated: 3, actionsPlanned: 0, actionsExecuted: 0, staleHeartbeats: 0, leasesExpired: 0 },
    ])
  })
}
