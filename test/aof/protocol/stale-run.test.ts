/**
 * The scheduler's rules for one task as pure functions (protocol/stale-run.ts): which run is stale and by what, which
 * result is applied, which is set aside. The pass that applies them runs on both stores in the AOF-BDD contract
 * (bdd-scheduler-cases.ts) and the store contract (store-contract.ts).
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { RunArtifact, RunHeartbeat, RunResult } from '../../../src/aof/protocol/schemas/run.ts'
import { isEarlierRunResult, resultToApply, staleOutcomeReason, staleRun } from '../../../src/aof/protocol/stale-run.ts'
import type { Task } from '../../../src/aof/protocol/task-file.ts'
import { T1 } from '../helpers.ts'

const NOW = Date.parse('2026-02-10T10:05:00.000Z')
const TTL = 300_000
const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString()

const task = (leaseExpiresIn?: number, status: Task['status'] = 'in-progress'): Task => ({
  id: T1,
  status,
  body: '',
  path: `tasks/${status}/${T1}.md`,
  data:
    leaseExpiresIn === undefined ? {} : { lease: { agent: 'swe', acquiredAt: at(-600_000), expiresAt: at(leaseExpiresIn), renewCount: 0 } },
})
const run = (runId: string, status: RunArtifact['status'] = 'running'): RunArtifact => ({
  taskId: T1,
  agentId: 'swe',
  runId,
  startedAt: at(-600_000),
  status,
  artifactPaths: { inputs: 'inputs/', work: 'work/', output: 'outputs/' },
  metadata: {},
})
const beat = (runId: string, expiresIn: number): RunHeartbeat => ({
  taskId: T1,
  agentId: 'swe',
  runId,
  lastHeartbeat: at(expiresIn - TTL),
  beatCount: 1,
  expiresAt: at(expiresIn),
})
const result = (runId: string, outcome: RunResult['outcome'], blockers: string[] = []): RunResult => ({
  taskId: T1,
  agentId: 'swe',
  runId,
  completedAt: at(-1_000),
  outcome,
  deliverables: [],
  blockers,
})

test('an expired heartbeat of the current run makes it stale by its heartbeat, whatever the lease says', () => {
  const stale = staleRun(task(600_000), run('r2'), beat('r2', -1), NOW, TTL)
  assert.equal(stale, { action: { type: 'stale_heartbeat', taskId: T1, agentId: 'swe', runId: 'r2' }, byHeartbeat: true })
  assert.is(staleRun(task(-1), run('r2'), beat('r2', 60_000), NOW, TTL), undefined, 'a live heartbeat keeps it')
})

test('a heartbeat of an earlier run says nothing about the current one: its lease decides', () => {
  assert.is(staleRun(task(60_000), run('r2'), beat('r1', -60_000), NOW, TTL), undefined)
  assert.equal(staleRun(task(-1), run('r2'), beat('r1', 60_000), NOW, TTL)?.action.type, 'expired_lease')
})

test('with neither a heartbeat nor a lease a task is never stale; a task out of progress never is', () => {
  assert.is(staleRun(task(), run('r2'), undefined, NOW, TTL), undefined)
  assert.is(staleRun(task(-1, 'review'), run('r2'), beat('r2', -1), NOW, TTL), undefined)
})

test("only the running run's own result is applied; an earlier run's beside it is set aside", () => {
  assert.equal(resultToApply(run('r2'), result('r2', 'partial'))?.outcome, 'partial')
  assert.is(resultToApply(run('r2'), result('r1', 'partial')), undefined)
  assert.is(resultToApply(run('r2', 'failed'), result('r2', 'partial')), undefined)
  assert.equal([isEarlierRunResult(result('r1', 'done'), run('r2')), isEarlierRunResult(result('r2', 'done'), run('r2'))], [true, false])
  assert.is(isEarlierRunResult(result('r1', 'done'), run('r2', 'failed')), false, 'nothing to protect once the run ended')
})

test('the reason of an applied result names its outcome, and a blocked one its blockers', () => {
  assert.is(staleOutcomeReason(result('r2', 'partial')), 'stale_heartbeat_partial')
  assert.is(
    staleOutcomeReason(result('r2', 'blocked', ['Dependency not ready', 'no key'])),
    'stale_heartbeat_blocked: Dependency not ready; no key',
  )
})

test.run()
