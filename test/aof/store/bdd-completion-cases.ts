/**
 * AOF-BDD scenarios of run results and completion (TASK-057 "Run Result Artifact", TASK-059 completion reports and
 * session end, and the cross-cutting duplicate report, invalid transition and missing summary), on any store.
 * Run by bdd-contract.ts.
 */

import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { routeOn } from '../../../src/aof/roles/router.ts'
import { sessionEnd } from '../../../src/aof/roles/session-end.ts'
import { readRunResultOn, writeRunResultOn } from '../../../src/aof/roles/run-files.ts'
import { RunResultSchema } from '../../../src/aof/protocol/schemas/run.ts'
import { AGENT, type BddSuite, codeOf, eventsOf, given, lastMove, movesOf, resultOfRun, sent, statusOf, withId } from './bdd-fixtures.ts'
import { T1, T2, T3, completion } from '../helpers.ts'

const RESULT = {
  taskId: T1,
  agentId: AGENT,
  completedAt: '2026-02-10T10:01:00.000Z',
  outcome: 'partial' as const,
  deliverables: [],
  blockers: [],
}

export function completionCases(t: BddSuite): void {
  // --- TASK-057 Run Result Artifact ---

  t('AOF-BDD-21 TASK-057 Write run_result.json to runs directory', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const result = { ...RESULT, runId: (await store.readRun(T1))!.runId }
    await writeRunResultOn(store, result)
    const stored = JSON.parse((await store.readRunFile(T1, 'run_result.json'))!)
    assert.ok(v.safeParse(RunResultSchema, stored).success, 'valid JSON matching the RunResult schema')
    assert.equal(stored, result)
  })

  t('AOF-BDD-22 TASK-057 Read existing run_result.json', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const full = { ...RESULT, runId: 'r1', summaryRef: 'outputs/s.md', tests: { total: 2, passed: 1, failed: 1 }, notes: 'n' }
    await writeRunResultOn(store, full)
    assert.equal(await readRunResultOn(store, T1), full)
  })

  t('AOF-BDD-23 TASK-057 Read non-existent run_result.json', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    assert.is(await readRunResultOn(store, T1), undefined)
    assert.is(await readRunResultOn(store, T2), undefined, 'nor for a task that does not exist')
  })

  t('AOF-BDD-24 TASK-057 Write run_result.json with all optional fields', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const full = {
      ...RESULT,
      deliverables: ['src/foo.ts', 'src/bar.ts'],
      blockers: ['API key needed'],
      notes: 'Partial completion due to blocker',
    }
    await writeRunResultOn(store, full)
    const stored = JSON.parse((await store.readRunFile(T1, 'run_result.json'))!)
    assert.equal(
      [stored.deliverables, stored.blockers, stored.notes],
      [['src/foo.ts', 'src/bar.ts'], ['API key needed'], 'Partial completion due to blocker'],
    )
  })

  // --- TASK-059 Completion Report Processing ---

  t('AOF-BDD-40 TASK-059 Process completion report with outcome=done', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const runId = (await store.readRun(T1))!.runId
    const out = await routeOn(store, completion(T1, { outcome: 'done' }, await sent(store)))
    assert.equal(out.transitions, [{ from: 'in-progress', to: 'review' }])
    assert.equal([(await readRunResultOn(store, T1))?.outcome, (await readRunResultOn(store, T1))?.runId], ['done', runId])
    assert.is(await statusOf(store, T1), 'review')
    assert.equal(
      (await eventsOf(store, 'task.completed', T1)).map((p) => p.outcome),
      ['done'],
    )
  })

  t('AOF-BDD-41 TASK-059 Process completion report with outcome=done and reviewRequired=false', async ({ h }) => {
    const { store } = h
    await given(store, T1, { metadata: { reviewRequired: false } })
    const out = await routeOn(store, completion(T1, { outcome: 'done' }, await sent(store)))
    assert.equal(out.transitions, [
      { from: 'in-progress', to: 'review' },
      { from: 'review', to: 'done' },
    ])
    assert.is((await readRunResultOn(store, T1))?.outcome, 'done')
    assert.is(await statusOf(store, T1), 'done')
    assert.equal((await movesOf(store, T1)).slice(-2), ['in-progress->review', 'review->done'])
  })

  t('AOF-BDD-42 TASK-059 Process completion report with outcome=blocked', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await routeOn(store, completion(T1, { outcome: 'blocked', blockers: ['API key needed'] }, await sent(store)))
    assert.is((await readRunResultOn(store, T1))?.outcome, 'blocked')
    assert.is(await statusOf(store, T1), 'blocked')
    const last = await lastMove(store, T1)
    assert.equal([last?.to, last?.reason], ['blocked', 'API key needed'])
    assert.is((await eventsOf(store, 'task.completed', T1)).length, 1)
  })

  t('AOF-BDD-43 TASK-059 Process completion report with outcome=needs_review', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await routeOn(store, completion(T1, { outcome: 'needs_review' }, await sent(store)))
    assert.is((await readRunResultOn(store, T1))?.outcome, 'needs_review')
    assert.is(await statusOf(store, T1), 'review')
    assert.equal(
      (await eventsOf(store, 'task.completed', T1)).map((p) => p.outcome),
      ['needs_review'],
    )
  })

  t('AOF-BDD-44 TASK-059 Process completion report with outcome=partial', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await routeOn(store, completion(T1, { outcome: 'partial', notes: '50% complete, needs more time' }, await sent(store)))
    assert.is((await readRunResultOn(store, T1))?.notes, '50% complete, needs more time')
    assert.is(await statusOf(store, T1), 'review')
    assert.equal(
      (await eventsOf(store, 'task.completed', T1)).map((p) => p.outcome),
      ['partial'],
    )
  })

  t('AOF-BDD-45 TASK-059 Idempotent completion - task already in target status', async ({ h }) => {
    const { store } = h
    await given(store, T1, { status: 'review' })
    const before = await movesOf(store, T1)
    const out = await routeOn(store, completion(T1, { outcome: 'partial' }, await sent(store)))
    assert.equal([out.outcome, out.transitions], ['accepted', []])
    assert.is((await readRunResultOn(store, T1))?.outcome, 'partial')
    assert.equal(await movesOf(store, T1), before)
    assert.is((await eventsOf(store, 'task.completed', T1)).length, 1)
  })

  // --- TASK-059 Session End Completion Check ---

  t('AOF-BDD-46 TASK-059 Session end with run_result.json applies transitions', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await resultOfRun(store, T1, 'partial')
    assert.equal(await sessionEnd(store), [{ taskId: T1, outcome: 'partial', transitions: [{ from: 'in-progress', to: 'review' }] }])
    assert.is(await statusOf(store, T1), 'review')
    assert.is((await movesOf(store, T1)).at(-1), 'in-progress->review')
    assert.is((await store.readRun(T1))?.status, 'completed')
  })

  t('AOF-BDD-47 TASK-059 Session end without run_result.json does nothing', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const before = (await store.readEvents()).length
    assert.equal(await sessionEnd(store), [])
    assert.is(await statusOf(store, T1), 'in-progress')
    assert.is((await store.readEvents()).length, before, 'no events are logged')
    assert.is((await store.readRun(T1))?.status, 'running')
  })

  t('AOF-BDD-48 TASK-059 Session end with multiple in-progress tasks', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await resultOfRun(store, T1, 'blocked')
    await given(store, T2, { metadata: { reviewRequired: false } })
    await resultOfRun(store, T2, 'done')
    await given(store, T3)
    await resultOfRun(store, T3, 'needs_review')
    const out = await sessionEnd(store)
    assert.equal(out.map((e) => [e.taskId, e.outcome, e.transitions.map((x) => x.to)]).sort(), [
      [T1, 'blocked', ['blocked']],
      [T2, 'done', ['review', 'done']],
      [T3, 'needs_review', ['review']],
    ])
    assert.equal([await statusOf(store, T1), await statusOf(store, T2), await statusOf(store, T3)], ['blocked', 'done', 'review'])
  })

  // --- Cross-cutting ---

  t('AOF-BDD-89 Cross-cutting Duplicate completion reports are idempotent', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    // The same report received again: delivered a second time as its own message (see the byte-for-byte re-send
    // below for what each store does with an identical one).
    const report = completion(T1, { outcome: 'done' }, await sent(store))
    const first = await routeOn(store, withId(report, 'report-1'))
    const stored = await store.readRunFile(T1, 'run_result.json')
    const moves = await movesOf(store, T1)
    const second = await routeOn(store, withId(report, 'report-1-again'))
    assert.equal([first.outcome, second.outcome, second.transitions], ['accepted', 'accepted', []])
    assert.is(await store.readRunFile(T1, 'run_result.json'), stored, 'run_result.json rewritten with the same data')
    assert.equal(await movesOf(store, T1), moves, 'no additional transition')
    assert.is(await statusOf(store, T1), 'review')
    assert.is((await eventsOf(store, 'protocol.message.received', T1)).length, 2, 'a receipt event each time')
    assert.is((await eventsOf(store, 'task.completed', T1)).length, 2)
  })

  t('AOF-BDD-92 Cross-cutting Invalid transition is silently skipped', async ({ h }) => {
    const { store } = h
    await given(store, T1, { status: 'done' })
    const before = await movesOf(store, T1)
    const out = await routeOn(store, completion(T1, { outcome: 'partial' }, await sent(store)))
    assert.equal([out.outcome, out.transitions], ['accepted', []])
    assert.is(await statusOf(store, T1), 'done')
    assert.equal(await movesOf(store, T1), before)
  })

  t('AOF-BDD-93 Cross-cutting Missing summary files do not block completion', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(store, completion(T1, { summaryRef: 'outputs/summary.md', outcome: 'partial' }, await sent(store)))
    assert.equal(out.warnings, ['summary_file_not_found'])
    assert.is(await statusOf(store, T1), 'review')
    assert.equal(await eventsOf(store, 'protocol.message.warning', T1), [
      { reason: 'summary_file_not_found', summaryRef: 'outputs/summary.md' },
    ])
  })

  // --- edge cases beyond the BDD text ---

  t(
    'the same report sent twice byte for byte is applied once: the filesystem routes it again to no effect, NATS knows the message',
    async ({ h }) => {
      const { store } = h
      await given(store, T1)
      const msg = completion(T1, { summaryRef: '' }, await sent(store))
      assert.is((await routeOn(store, msg)).outcome, 'accepted')
      const again = await routeOn(store, JSON.stringify(msg))
      // A store with a message log (NATS: recordMessage/markRouted) skips a message it routed; the filesystem keeps
      // none and routes it again, where the handler finds nothing left to do (docs/fleet.md, Messages and routers).
      if (store.kind === 'nats') assert.equal(again, { outcome: 'ignored', reason: 'duplicate', taskId: T1, type: 'completion.report' })
      else assert.equal([again.outcome, again.transitions], ['accepted', []])
      assert.equal(await movesOf(store, T1), ['ready->in-progress', 'in-progress->review'])
      assert.is((await eventsOf(store, 'task.completed', T1)).length, store.kind === 'nats' ? 1 : 2)
    },
  )

  t('a completion report sent before the current run started is refused as stale_run; nothing is written', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(store, completion(T1, {}, { sentAt: '2020-01-01T00:00:00.000Z' }))
    assert.equal([out.outcome, out.reason], ['rejected', 'stale_run'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', T1)).map((p) => [p.reason, p.runId]),
      [['stale_run', (await store.readRun(T1))?.runId]],
    )
    assert.is(await store.readRunFile(T1, 'run_result.json'), undefined)
    assert.is(await statusOf(store, T1), 'in-progress')
    assert.is((await store.readRun(T1))?.status, 'running')
  })

  t('a summary that exists in the task folder gives no warning; one outside it is flagged', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await store.writeFile(T1, 'outputs/summary.md', new TextEncoder().encode('# done'))
    const ok = await routeOn(store, completion(T1, { outcome: 'partial' }, await sent(store)))
    assert.equal([ok.outcome, ok.warnings], ['accepted', undefined])
    await given(store, T2)
    const out = await routeOn(store, completion(T2, { summaryRef: '../../../../etc/passwd' }, await sent(store)))
    assert.equal(out.warnings, ['summary_ref_outside_task'])
    assert.is(await statusOf(store, T2), 'review')
  })

  t('leasing a task again sets the earlier run’s result aside; session end never applies it to the new run', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await routeOn(store, completion(T1, { outcome: 'blocked', blockers: ['x'] }, await sent(store)))
    const earlier = (await readRunResultOn(store, T1))!
    await store.transition(T1, 'ready', { actor: 'ops' })
    const { run } = await store.lease(T1, AGENT)
    assert.is.not(run.runId, earlier.runId)
    // Set aside, where no session end (tea's or the reference's) applies it to the new run.
    assert.is(await store.readRunFile(T1, 'run_result.json'), undefined)
    assert.is(JSON.parse((await store.readRunFile(T1, 'previous_run_result.json'))!).runId, earlier.runId)
    // One that comes back (written late by another implementation) is still not this run's.
    await writeRunResultOn(store, earlier)
    assert.equal(await sessionEnd(store), [])
    assert.is(await statusOf(store, T1), 'in-progress')
    assert.is((await store.readRun(T1))?.status, 'running')
  })

  t('session end applies a result written for the current run and sets aside one from an earlier run', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await resultOfRun(store, T1, 'blocked')
    await given(store, T2)
    await resultOfRun(store, T2, 'done', { runId: 'OLD-RUN' })
    assert.equal(await sessionEnd(store), [{ taskId: T1, outcome: 'blocked', transitions: [{ from: 'in-progress', to: 'blocked' }] }])
    assert.equal([await statusOf(store, T1), (await store.readRun(T1))?.status], ['blocked', 'completed'])
    assert.equal([await statusOf(store, T2), (await store.readRun(T2))?.status], ['in-progress', 'running'])
    assert.is(await store.readRunFile(T2, 'run_result.json'), undefined)
    assert.match((await store.readRunFile(T2, 'previous_run_result.json'))!, 'OLD-RUN')
  })

  t('a torn run_result.json reads as absent; an invalid one is refused on write (AOF_INVALID)', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await store.writeRunFile(T1, 'run_result.json', '{"taskId": "TASK-2026')
    assert.is(await readRunResultOn(store, T1), undefined)
    assert.equal(await sessionEnd(store), [])
    assert.is(await codeOf(writeRunResultOn(store, { ...RESULT, outcome: 'maybe' as never })), 'AOF_INVALID')
    assert.is(await store.readRunFile(T1, 'run_result.json'), '{"taskId": "TASK-2026')
  })
}
