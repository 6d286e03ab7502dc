import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { completionFromFailure, completionFromInterrupt, completionFromState } from '../../../src/aof/protocol/worker-completion.ts'

const zero = { total: 0, passed: 0, failed: 0 }

test('a final state without outcome reports done, with the summary as notes', () => {
  assert.equal(completionFromState({ summary: 'calibrated' }), {
    outcome: 'done',
    summaryRef: '',
    deliverables: [],
    tests: zero,
    blockers: [],
    notes: 'calibrated',
  })
})

test('state.outcome picks the AOF/1 outcome; failed is reported as blocked', () => {
  for (const o of ['done', 'blocked', 'needs_review', 'partial'] as const) assert.is(completionFromState({ outcome: o }).outcome, o)
  const failed = completionFromState({ outcome: 'failed' })
  assert.is(failed.outcome, 'blocked')
  assert.equal(failed.blockers, ['the agent reported outcome "failed"'])
  assert.equal(completionFromState({ outcome: 'failed', blockers: ['disk full'] }).blockers, ['disk full'])
})

test('an unknown outcome is blocked with a blocker naming it, never passed off as done', () => {
  for (const raw of ['Done!', 'constructor', 42]) {
    const r = completionFromState({ outcome: raw, blockers: ['b'] })
    assert.is(r.outcome, 'blocked')
    assert.match(r.blockers[0]!, JSON.stringify(raw))
    assert.is(r.blockers[1], 'b')
  }
})

test('summaryRef, deliverables, tests and blockers are taken when well-formed', () => {
  const r = completionFromState({
    outcome: 'partial',
    notes: 'half',
    summaryRef: 'outputs/summary.md',
    deliverables: ['outputs/a.txt', 7],
    tests: { total: 3, passed: 2, failed: 1 },
    blockers: ['waiting on QA'],
  })
  assert.equal(r, {
    outcome: 'partial',
    summaryRef: 'outputs/summary.md',
    deliverables: ['outputs/a.txt', '7'],
    tests: { total: 3, passed: 2, failed: 1 },
    blockers: ['waiting on QA'],
    notes: 'half',
  })
  assert.equal(completionFromState({ tests: { total: 1, passed: 2, failed: 0 } }).tests, zero, 'passed + failed > total is dropped')
  assert.equal(completionFromState({ tests: { total: -1, passed: 0, failed: 0 } }).tests, zero)
  assert.is(completionFromState({ summary: { a: 1 } }).notes, '{"a":1}')
})

test('texts are clipped to the protocol limits instead of having the report refused', () => {
  const r = completionFromState({
    summary: 'x'.repeat(20_000),
    blockers: Array.from({ length: 30 }, () => 'y'.repeat(300)),
    summaryRef: 'z'.repeat(300),
  })
  assert.is(r.notes.length, 10_000)
  assert.is(r.blockers.length, 20)
  assert.is(r.blockers[0]!.length, 256)
  assert.is(r.summaryRef, '')
})

test('a failed run reports blocked with the error as blocker; an interrupt reports needs_review', () => {
  const f = completionFromFailure('aof-r', { code: 'NODE_FAILED', message: 'boom', node: 'decide' })
  assert.is(f.outcome, 'blocked')
  assert.equal(f.blockers, ["agent run failed at node 'decide': [NODE_FAILED] boom"])
  assert.match(f.notes, 'tea resume aof-r')
  const i = completionFromInterrupt('aof-r', 'approve', 'before')
  assert.is(i.outcome, 'needs_review')
  assert.match(i.notes, "before node 'approve'")
})

test.run()
