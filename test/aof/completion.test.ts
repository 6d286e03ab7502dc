import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  getTask,
  handleSessionEnd,
  readEvents,
  readRun,
  readRunResult,
  resolveCompletionTransitions,
  routeMessage,
  writeRunResult,
} from '../../src/aof/index.ts'
import { T1, T2, T3, completion, eventsOf, fixture, makeTask, withFixture, type Fixture } from './helpers.ts'

type F = Fixture

const transitions = (f: F, id = T1) => eventsOf(f.ctx, 'task.transitioned', id).map((p) => `${p.from}->${p.to}`)

test(
  'AOF-BDD-40 Process completion report with outcome=done',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const out = await routeMessage(f.ctx, completion(T1, { outcome: 'done' }))
    assert.equal(out.transitions, [{ from: 'in-progress', to: 'review' }])
    assert.ok(existsSync(join(f.dir, 'state', 'runs', T1, 'run_result.json')))
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.equal(
      eventsOf(f.ctx, 'task.completed', T1).map((p) => p.outcome),
      ['done'],
    )
  }),
)

test(
  'AOF-BDD-41 Process completion report with outcome=done and reviewRequired=false',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, metadata: { reviewRequired: false } })
    await routeMessage(f.ctx, completion(T1, { outcome: 'done' }))
    assert.is(readRunResult(f.ctx, T1)?.outcome, 'done')
    assert.is((await getTask(f.ctx, T1))!.status, 'done')
    assert.equal(transitions(f).slice(-2), ['in-progress->review', 'review->done'])
  }),
)

test(
  'AOF-BDD-42 Process completion report with outcome=blocked',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, completion(T1, { outcome: 'blocked', blockers: ['API key needed'] }))
    assert.is(readRunResult(f.ctx, T1)?.outcome, 'blocked')
    assert.is((await getTask(f.ctx, T1))!.status, 'blocked')
    const last = eventsOf(f.ctx, 'task.transitioned', T1).at(-1)!
    assert.equal([last.to, last.reason], ['blocked', 'API key needed'])
    assert.equal(eventsOf(f.ctx, 'task.completed', T1).length, 1)
  }),
)

test(
  'AOF-BDD-43 Process completion report with outcome=needs_review',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, completion(T1, { outcome: 'needs_review' }))
    assert.is(readRunResult(f.ctx, T1)?.outcome, 'needs_review')
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.equal(
      eventsOf(f.ctx, 'task.completed', T1).map((p) => p.outcome),
      ['needs_review'],
    )
  }),
)

test(
  'AOF-BDD-44 Process completion report with outcome=partial',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, completion(T1, { outcome: 'partial', notes: '50% complete, needs more time' }))
    assert.is(readRunResult(f.ctx, T1)?.notes, '50% complete, needs more time')
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.equal(
      eventsOf(f.ctx, 'task.completed', T1).map((p) => p.outcome),
      ['partial'],
    )
  }),
)

test(
  'AOF-BDD-45 Idempotent completion - task already in target status',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'review' })
    const before = transitions(f).length
    const out = await routeMessage(f.ctx, completion(T1, { outcome: 'partial' }))
    assert.is(out.outcome, 'accepted')
    assert.equal(out.transitions, [])
    assert.is(readRunResult(f.ctx, T1)?.outcome, 'partial')
    assert.is(transitions(f).length, before)
    assert.equal(eventsOf(f.ctx, 'task.completed', T1).length, 1)
  }),
)

async function inProgressWithResult(
  f: F,
  id: string,
  outcome: 'done' | 'blocked' | 'needs_review' | 'partial',
  extra: Record<string, unknown> = {},
) {
  await makeTask(f.ctx, { id, ...extra })
  const run = readRun(f.ctx, id)!
  writeRunResult(f.ctx, {
    taskId: id,
    agentId: 'swe-backend',
    runId: run.runId!,
    completedAt: '2026-02-10T10:02:00.000Z',
    outcome,
    deliverables: [],
    blockers: outcome === 'blocked' ? ['Dependency not ready'] : [],
  })
}

test(
  'AOF-BDD-46 Session end with run_result.json applies transitions',
  withFixture(async (f) => {
    await inProgressWithResult(f, T1, 'partial')
    const out = await handleSessionEnd(f.ctx)
    assert.equal(out, [{ taskId: T1, outcome: 'partial', transitions: [{ from: 'in-progress', to: 'review' }] }])
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.equal(transitions(f).at(-1), 'in-progress->review')
    assert.is(readRun(f.ctx, T1)?.status, 'completed')
  }),
)

test(
  'AOF-BDD-47 Session end without run_result.json does nothing',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const before = readEvents(f.ctx).length
    assert.equal(await handleSessionEnd(f.ctx), [])
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
    assert.is(readEvents(f.ctx).length, before)
  }),
)

test(
  'AOF-BDD-48 Session end with multiple in-progress tasks',
  withFixture(async (f) => {
    await inProgressWithResult(f, T1, 'blocked')
    await inProgressWithResult(f, T2, 'done', { metadata: { reviewRequired: false } })
    await inProgressWithResult(f, T3, 'needs_review')
    const out = await handleSessionEnd(f.ctx)
    assert.is(out.length, 3)
    assert.equal(
      [(await getTask(f.ctx, T1))!.status, (await getTask(f.ctx, T2))!.status, (await getTask(f.ctx, T3))!.status],
      ['blocked', 'done', 'review'],
    )
  }),
)

test(
  'session end never applies a result left by an earlier run of the same task',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, completion(T1, { outcome: 'blocked', blockers: ['x'] }))
    const { transitionTask, acquireLease } = await import('../../src/aof/index.ts')
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    f.advance(60_000)
    const earlier = readRunResult(f.ctx, T1)!
    await acquireLease(f.ctx, T1, 'swe-backend')
    // The new run puts the earlier result aside, where the reference's session end cannot apply it (issue 15)...
    assert.is(readRunResult(f.ctx, T1), undefined)
    const aside = JSON.parse(readFileSync(join(f.dir, 'state', 'runs', T1, 'previous_run_result.json'), 'utf8'))
    assert.is(aside.outcome, 'blocked')
    // ...and one that comes back (written late by another implementation) is still not ours: its runId differs.
    writeRunResult(f.ctx, earlier)
    assert.equal(await handleSessionEnd(f.ctx), [])
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
  }),
)

test(
  'a completion report sent before the current run started is refused as stale_run',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const out = await routeMessage(f.ctx, completion(T1, {}, { sentAt: '2026-02-10T09:00:00.000Z' }))
    assert.equal([out.outcome, out.reason], ['rejected', 'stale_run'])
    assert.is(readRunResult(f.ctx, T1), undefined)
  }),
)

const subject = (status: 'in-progress' | 'review' | 'done', reviewRequired?: boolean) => ({
  status,
  metadata: reviewRequired === undefined ? {} : { reviewRequired },
})

test('AOF-BDD-49 Resolve transitions for outcome=done with review required', () => {
  assert.equal(resolveCompletionTransitions(subject('in-progress', true), 'done'), ['review'])
  assert.equal(resolveCompletionTransitions(subject('in-progress'), 'done'), ['review'])
})

test('AOF-BDD-50 Resolve transitions for outcome=done without review required', () => {
  assert.equal(resolveCompletionTransitions(subject('in-progress', false), 'done'), ['review', 'done'])
  assert.equal(resolveCompletionTransitions(subject('review', false), 'done'), ['done'])
  assert.equal(resolveCompletionTransitions(subject('done', false), 'done'), [])
})

test('AOF-BDD-51 Resolve transitions for outcome=blocked', () => {
  assert.equal(resolveCompletionTransitions(subject('in-progress'), 'blocked'), ['blocked'])
})

test('AOF-BDD-52 Resolve transitions for outcome=needs_review', () => {
  assert.equal(resolveCompletionTransitions(subject('in-progress'), 'needs_review'), ['review'])
})

test('AOF-BDD-53 Resolve transitions for outcome=partial', () => {
  assert.equal(resolveCompletionTransitions(subject('in-progress'), 'partial'), ['review'])
})

test('AOF-BDD-54 Resolve transitions when task already in target status', () => {
  assert.equal(resolveCompletionTransitions(subject('review'), 'partial'), [])
})

test(
  'AOF-BDD-89 Duplicate completion reports are idempotent',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const msg = completion(T1, { outcome: 'done' })
    const first = await routeMessage(f.ctx, msg)
    const stored = readRunResult(f.ctx, T1)
    const nTransitions = transitions(f).length
    const second = await routeMessage(f.ctx, JSON.stringify(msg))
    assert.is(first.outcome, 'accepted')
    assert.is(second.outcome, 'accepted')
    assert.equal(second.transitions, [])
    assert.equal(readRunResult(f.ctx, T1), stored)
    assert.is(transitions(f).length, nTransitions)
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.equal(eventsOf(f.ctx, 'protocol.message.received', T1).length, 2)
    assert.equal(eventsOf(f.ctx, 'task.completed', T1).length, 2)
  }),
)

test(
  'AOF-BDD-92 Invalid transition is silently skipped',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'done' })
    const before = transitions(f).length
    const out = await routeMessage(f.ctx, completion(T1, { outcome: 'partial' }))
    assert.is(out.outcome, 'accepted')
    assert.equal(out.transitions, [])
    assert.is((await getTask(f.ctx, T1))!.status, 'done')
    assert.is(transitions(f).length, before)
  }),
)

test(
  'AOF-BDD-93 Missing summary files do not block completion',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const out = await routeMessage(f.ctx, completion(T1, { summaryRef: 'outputs/summary.md', outcome: 'partial' }))
    assert.equal(out.warnings, ['summary_file_not_found'])
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.equal(eventsOf(f.ctx, 'protocol.message.warning', T1), [{ reason: 'summary_file_not_found', summaryRef: 'outputs/summary.md' }])
  }),
)

test(
  'a summary that exists in the task folder gives no warning; one outside it is flagged',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    mkdirSync(join(f.dir, 'tasks', 'in-progress', T1, 'outputs'), { recursive: true })
    writeFileSync(join(f.dir, 'tasks', 'in-progress', T1, 'outputs', 'summary.md'), '# done')
    const ok = await routeMessage(f.ctx, completion(T1, { outcome: 'partial' }))
    assert.is(ok.warnings, undefined)
    await makeTask(f.ctx, { id: T2 })
    const out = await routeMessage(f.ctx, completion(T2, { summaryRef: '../../../../etc/passwd' }))
    assert.equal(out.warnings, ['summary_ref_outside_task'])
  }),
)

test.run()
