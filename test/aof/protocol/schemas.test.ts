import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { parseProtocolMessage } from '../../../src/aof/index.ts'
import { issuesOf } from '../../../src/aof/protocol/schemas/common.ts'
import {
  CompletionReportPayload,
  HandoffAckPayload,
  HandoffRequestPayload,
  StatusUpdatePayload,
  TestReport,
} from '../../../src/aof/protocol/schemas/payloads.ts'
import { T1, T2, completion, envelope, handoff, statusUpdate } from '../helpers.ts'

function parsed(msg: unknown) {
  const r = parseProtocolMessage(msg)
  if (r.kind !== 'envelope') throw new Error(`expected an envelope, got ${JSON.stringify(r)}`)
  return r.envelope
}

function rejected(msg: unknown) {
  const r = parseProtocolMessage(msg)
  if (r.kind !== 'rejected') throw new Error(`expected a rejection, got ${JSON.stringify(r)}`)
  return r
}

function issuesFor(schema: v.GenericSchema, value: unknown) {
  const r = v.safeParse(schema, value)
  return r.success ? [] : issuesOf(r.issues)
}

test('AOF-BDD-01 Valid completion report envelope', () => {
  const env = parsed(completion(T1))
  assert.is(env.type, 'completion.report')
  assert.is(env.taskId, T1)
  assert.equal((env.payload as { tests: unknown }).tests, { total: 10, passed: 8, failed: 2 })
})

test('AOF-BDD-02 Valid status update envelope', () => {
  for (const field of [{ status: 'blocked' }, { progress: 'x' }, { blockers: ['b'] }, { notes: 'n' }]) {
    const env = parsed(statusUpdate(T1, field))
    assert.is(env.type, 'status.update')
    assert.equal((env.payload as Record<string, unknown>).agentId, 'swe-backend')
  }
})

test('AOF-BDD-03 Valid handoff request envelope', () => {
  const env = parsed(handoff(T2, T1, { acceptanceCriteria: ['All tests pass'] }))
  assert.is(env.type, 'handoff.request')
  assert.equal((env.payload as { acceptanceCriteria: string[] }).acceptanceCriteria, ['All tests pass'])
})

test('AOF-BDD-04 Valid handoff acknowledgment envelopes', () => {
  for (const type of ['handoff.accepted', 'handoff.rejected']) {
    const env = parsed(envelope(type, T2, { taskId: T2, accepted: type === 'handoff.accepted', reason: 'because' }))
    assert.is(env.type, type)
    assert.is((env.payload as { reason: string }).reason, 'because')
  }
})

test('AOF-BDD-05 Invalid protocol field', () => {
  const r = rejected(JSON.stringify(completion(T1, {}, { protocol: 'custom' })))
  assert.is(r.reason, 'invalid_envelope')
  assert.ok(r.issues?.some((i) => i.path === 'protocol' && /expected protocol "aof"/.test(i.message)))
  // An object (a chat event carrying another protocol's message) is not for us: ignored, as the reference does.
  assert.equal(parseProtocolMessage(completion(T1, {}, { protocol: 'custom' })), { kind: 'ignored' })
})

test('AOF-BDD-06 Invalid version field', () => {
  const r = rejected(completion(T1, {}, { version: 2 }))
  assert.ok(r.issues?.some((i) => i.path === 'version' && /unsupported version/.test(i.message)))
})

test('AOF-BDD-07 Missing required envelope fields', () => {
  const msg = completion(T1)
  delete msg.taskId
  const r = rejected(msg)
  assert.is(r.reason, 'invalid_envelope')
  assert.equal(
    r.issues?.map((i) => i.path),
    ['taskId'],
  )
})

test('AOF-BDD-08 Invalid taskId format', () => {
  const r = rejected(completion('invalid-format'))
  assert.ok(r.issues?.some((i) => i.path === 'taskId' && /TASK-YYYY-MM-DD-NNN/.test(i.message)))
})

test('AOF-BDD-09 Invalid sentAt timestamp', () => {
  const r = rejected(completion(T1, {}, { sentAt: 'not-a-timestamp' }))
  assert.ok(r.issues?.some((i) => i.path === 'sentAt' && /ISO 8601/.test(i.message)))
})

test('AOF-BDD-10 Valid completion outcome values', () => {
  for (const outcome of ['done', 'blocked', 'needs_review', 'partial']) {
    const p = completion(T1, { outcome }).payload
    assert.equal(issuesFor(CompletionReportPayload, p), [], outcome)
  }
})

test('AOF-BDD-11 Invalid completion outcome', () => {
  const issues = issuesFor(CompletionReportPayload, completion(T1, { outcome: 'in-progress' }).payload)
  assert.is(issues.length, 1)
  assert.is(issues[0]!.path, 'outcome')
  assert.match(issues[0]!.message, 'outcome must be one of: done, blocked, needs_review, partial')
})

test('AOF-BDD-12 Test report with valid counts', () => {
  assert.equal(issuesFor(TestReport, { total: 10, passed: 8, failed: 2 }), [])
  const over = issuesFor(TestReport, { total: 10, passed: 8, failed: 3 })
  assert.match(over[0]!.message, 'passed + failed must not exceed total')
})

test('AOF-BDD-13 Test report with negative values', () => {
  const issues = issuesFor(TestReport, { total: 10, passed: 8, failed: -1 })
  assert.equal(
    issues.map((i) => [i.path, i.message]),
    [['failed', 'counts must be non-negative']],
  )
})

test('AOF-BDD-14 Empty deliverables array defaults correctly', () => {
  const r = v.parse(CompletionReportPayload, completion(T1).payload)
  assert.equal(r.deliverables, [])
  assert.equal(r.blockers, [])
})

test('AOF-BDD-15 Status update must have at least one field', () => {
  const issues = issuesFor(StatusUpdatePayload, { taskId: T1, agentId: 'a' })
  assert.is(issues.length, 1)
  assert.match(issues[0]!.message, 'at least one update field is required')
})

test('AOF-BDD-16 Status update with only progress', () => {
  assert.equal(issuesFor(StatusUpdatePayload, { taskId: T1, agentId: 'a', progress: '50% complete' }), [])
})

test('AOF-BDD-17 Status update with blockers array', () => {
  const out = v.parse(StatusUpdatePayload, { taskId: T1, agentId: 'a', blockers: ['API key needed', 'Dependency not ready'] })
  assert.equal(out.blockers, ['API key needed', 'Dependency not ready'])
  assert.equal(issuesFor(StatusUpdatePayload, { taskId: T1, agentId: 'a', blockers: [1] })[0]?.path, 'blockers.0')
})

test('AOF-BDD-18 Valid handoff request with all fields', () => {
  const p = {
    taskId: T2,
    parentTaskId: T1,
    fromAgent: 'a',
    toAgent: 'b',
    acceptanceCriteria: ['All tests pass', 'Documentation updated'],
    expectedOutputs: ['tests/report.md'],
    contextRefs: ['tasks/in-progress/TASK-2026-02-09-001.md'],
    constraints: ['No new dependencies'],
    dueBy: '2026-02-11T12:00:00.000Z',
  }
  assert.equal(v.parse(HandoffRequestPayload, p), p)
})

test('AOF-BDD-19 Handoff request with minimal fields', () => {
  const out = v.parse(HandoffRequestPayload, {
    taskId: T2,
    parentTaskId: T1,
    fromAgent: 'a',
    toAgent: 'b',
    dueBy: '2026-02-11T12:00:00.000Z',
  })
  assert.equal([out.acceptanceCriteria, out.expectedOutputs, out.contextRefs, out.constraints], [[], [], [], []])
})

test('AOF-BDD-20 Invalid dueBy timestamp', () => {
  const issues = issuesFor(HandoffRequestPayload, { taskId: T2, parentTaskId: T1, fromAgent: 'a', toAgent: 'b', dueBy: 'tomorrow' })
  assert.equal(
    issues.map((i) => i.path),
    ['dueBy'],
  )
  assert.match(issues[0]!.message, 'ISO 8601')
})

test('limits: every violated limit is reported at once, each with its dot-path', () => {
  const r = rejected(
    completion(T1, {
      summaryRef: 'x'.repeat(257),
      deliverables: Array(51).fill('d'),
      blockers: ['y'.repeat(257)],
      notes: 'n'.repeat(10_001),
    }),
  )
  assert.equal(r.issues?.map((i) => i.path).sort(), ['payload.blockers.0', 'payload.deliverables', 'payload.notes', 'payload.summaryRef'])
})

test('a handoff ack needs a boolean accepted and a reason of at most 512 characters', () => {
  assert.equal(
    issuesFor(HandoffAckPayload, { taskId: T1, accepted: 'yes', reason: 'r'.repeat(513) }).map((i) => i.path),
    ['accepted', 'reason'],
  )
})

test('both task id shapes are accepted; anything path-like is refused', () => {
  assert.is(parsed(completion('TASK-2026-02-09-001-02')).taskId, 'TASK-2026-02-09-001-02')
  assert.is(parsed(completion('TASK-2026-11-22-ZV3e885b')).taskId, 'TASK-2026-11-22-ZV3e885b')
  for (const bad of ['TASK-../../etc', 'TASK-2026-02-09-0/1', 'TASK-2026-11-22-ZV3e885l', '../TASK-2026-02-09-001']) {
    assert.is(rejected(completion(bad)).issues?.[0]?.path, 'taskId', bad)
  }
})

test('projectId is optional and project_id is accepted as its alias', () => {
  assert.is(parsed(completion(T1)).projectId, undefined)
  assert.is(parsed(completion(T1, {}, { project_id: 'p1' })).projectId, 'p1')
})

test.run()
