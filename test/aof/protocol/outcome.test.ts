/**
 * Completion on the filesystem only: the outcome map as a pure function (AOF-BDD-49–54, no store) and where a
 * summary is looked for on disk. Completion reports, session end and the cross-cutting completion scenarios run on
 * every store in the AOF-BDD contract (bdd-completion-cases.ts, bdd-contract.ts).
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { resolveCompletionTransitions, routeMessage } from '../../../src/aof/index.ts'
import { T1, completion, makeTask, withFixture } from '../helpers.ts'

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
  "a summary is looked for in the task's own folder on disk, tasks/<status>/<ID>/ (the reference used the cwd)",
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    mkdirSync(join(f.dir, 'tasks', 'in-progress', T1, 'outputs'), { recursive: true })
    writeFileSync(join(f.dir, 'tasks', 'in-progress', T1, 'outputs', 'summary.md'), '# done')
    const ok = await routeMessage(f.ctx, completion(T1, { outcome: 'partial' }))
    assert.is(ok.warnings, undefined)
  }),
)

test.run()
