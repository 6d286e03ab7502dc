/**
 * The count auto-resume keeps in a run's record (src/cli/serve/auto-resume.ts): it goes on only while the dead owner
 * is the tea serve that resumed the run and no node committed since; RESUME_LIMIT is written atomically, naming
 * the deaths, the node and the fix. End to end with real SIGKILLs: test/e2e/serve-resume-limit.test.ts.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { clearAutoResume, deathsInARow, failResumeLimit, markAutoResume } from '../../../src/cli/serve/auto-resume.ts'
import { isTeaError } from '../../../src/core/errors.ts'
import { selfIdentity } from '../../../src/core/process.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import type { RunRecord } from '../../../src/store/types.ts'

/** A pid no live process has (beyond Linux's default pid_max), as a dead owner's. */
const DEAD = 4_194_999

function record(patch: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'r1',
    agent: 'a',
    agentPath: '/a.yaml',
    agentHash: 'h',
    status: 'running',
    node: 'n',
    step: 3,
    createdAt: 1,
    updatedAt: 1,
    pid: DEAD,
    ...patch,
  }
}

test('28 auto-resume: a first death counts 1; a clean stop counts none', () => {
  assert.is(deathsInARow(record(), 3, true), 1)
  assert.is(deathsInARow(record({ status: 'cancelled' }), 3, false), 0)
})

test('28 auto-resume: the count goes on while the dead owner is the serve that resumed it at the same step', () => {
  const autoResume = { deaths: 2, step: 3, pid: DEAD }
  assert.is(deathsInARow(record({ autoResume }), 3, true), 3)
  assert.is(deathsInARow(record({ autoResume }), 4, true), 1, 'a node committed since: the run moves on, the count restarts')
  assert.is(deathsInARow(record({ autoResume, pid: DEAD - 1 }), 3, true), 1, "another owner since (a person's tea resume)")
  assert.is(deathsInARow(record({ autoResume, pidStart: 77 }), 3, true), 1, 'the same pid, another process')
  assert.is(deathsInARow(record({ autoResume, status: 'cancelled' }), 3, false), 2, 'a clean stop neither adds nor resets')
})

test('28 auto-resume: the attempt is written with this process as owner; the API resume clears it', async () => {
  const store = createMemoryStore()
  await store.createRun(record())
  const me = selfIdentity()
  const marked = await markAutoResume(store, 'r1', 2, 3)
  assert.is(marked.pid, me.pid)
  assert.equal(marked.autoResume, { deaths: 2, step: 3, pid: me.pid, ...(me.startTicks !== undefined && { pidStart: me.startTicks }) })
  // Killed now, this process would be the dead owner that resumed it: the next start counts on.
  assert.is(deathsInARow((await store.getRun('r1'))!, 3, true), 3)
  await clearAutoResume(store, 'r1')
  assert.is((await store.getRun('r1'))!.autoResume, undefined)
  assert.is((await store.getRun('r1'))!.status, 'running')
})

test('28 auto-resume: RESUME_LIMIT fails the run with the deaths, the node and the fix; a run taken meanwhile is left alone', async () => {
  const store = createMemoryStore()
  const run = record()
  await store.createRun(run)
  const failed = await failResumeLimit(store, run, 4, 3, 'grow')
  assert.is(failed.status, 'failed')
  assert.is(failed.error?.code, 'RESUME_LIMIT')
  assert.is(failed.error?.node, 'grow')
  assert.match(failed.error!.message, /^its process died 4 times in a row while the run was in flight in node 'grow'/)
  assert.match(failed.error!.message, /at most 3 times: --resume-limit/)
  assert.match(failed.error!.message, /tea resume r1$/)
  assert.equal((await store.getRun('r1'))!.error, failed.error)
  // Another process (alive: this one, under another pid start) took the run between the list and the write.
  const taken = record({ id: 'r2', pid: process.pid, pidStart: selfIdentity().startTicks })
  await store.createRun({ ...taken, pid: process.ppid, pidStart: undefined })
  const err = await failResumeLimit(store, taken, 4, 3, 'grow').catch((e: unknown) => e)
  assert.ok(isTeaError(err, 'RUN_NOT_RESUMABLE'), String(err))
  assert.is((await store.getRun('r2'))!.status, 'running')
})

test.run()
