/**
 * Issue 15 item 2: accept and refuse what the reference implementation (v1.20.0) does. Keys tea passes through and
 * the reference refuses are reported by lint (`reference_rejects`, naming the key and what the reference expects);
 * impossible dates are refused as the reference refuses them; empty strings the reference accepts are accepted.
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createTask, getTask, lintDataDir, listTasks, parseProtocolMessage, routeMessage, transitionTask } from '../../../src/aof/index.ts'
import { T1, completion, envelope, handoff, makeTask, statusUpdate, withFixture, type Fixture } from '../helpers.ts'

/** A backlog task with `yaml` added to its frontmatter; its path. */
async function taskWith(f: Fixture, yaml: string): Promise<string> {
  const task = await createTask(f.ctx, { id: T1, title: 't', status: 'backlog' })
  let text = readFileSync(task.path, 'utf8')
  if (/^metadata:/m.test(yaml)) text = text.replace('metadata: {}\n', '')
  writeFileSync(task.path, text.replace(/\n---\n\n/, `\n${yaml}\n---\n\n`))
  return task.path
}

const refused = (f: Fixture) =>
  lintDataDir(f.ctx)
    .filter((p) => p.code === 'reference_rejects')
    .map((p) => p.message.split('; ')[0])

const CASES: Array<[string, string]> = [
  ['sla: { maxInProgressMs: 0 }', 'sla.maxInProgressMs: expected a positive integer (ms), received 0'],
  ['sla: { onViolation: panic }', 'sla.onViolation: expected one of alert, block, deadletter, received "panic"'],
  ['contextTier: medium', 'contextTier: expected one of seed, full, received "medium"'],
  ['callbackDepth: -1', 'callbackDepth: expected an integer ≥ 0, received -1'],
  ['callbackDepth: 1.5', 'callbackDepth: expected an integer ≥ 0, received 1.5'],
  ['instructionsRef: ""', 'instructionsRef: expected a non-empty string, received ""'],
  ['requiredRunbook: 3', 'requiredRunbook: expected a string, received 3'],
  ['resource: [a]', 'resource: expected a string, received an array'],
  ['testsFile: true', 'testsFile: expected a string, received true'],
  ['metadata: []', 'metadata: expected a mapping, received an array'],
  ['gate: { current: "" , entered: 2026-02-10T10:00:00.000Z }', 'gate.current: expected a non-empty string, received ""'],
  ['gateHistory: [{ gate: g, role: r }]', 'gateHistory.0.entered: required, missing'],
  [
    'gateHistory: [{ gate: g, role: r, entered: 2026-02-30T00:00:00Z }]',
    'gateHistory.0.entered: expected an ISO 8601 datetime of a real date and time (e.g. 2026-02-10T10:00:00.000Z), received "2026-02-30T00:00:00Z"',
  ],
  ['tests: [{ given: a, when: b }]', 'tests.0.then: required, missing'],
  [
    'reviewContext: { fromGate: g, fromRole: r, timestamp: now }',
    'reviewContext.timestamp: expected an ISO 8601 datetime of a real date and time (e.g. 2026-02-10T10:00:00.000Z), received "now"',
  ],
  [
    'workflow: { definition: { name: w, hops: [] }, state: { status: running, hops: {} } }',
    'workflow.definition.hops: expected at least one hop, received an array',
  ],
  [
    `gate: { current: g, entered: '2026-02-10T10:00:00+01:00' }`,
    `gate.entered: expected a UTC datetime ending in Z (the reference refuses an offset), received "2026-02-10T10:00:00+01:00"`,
  ],
  [
    `reviewContext: { fromGate: g, fromRole: r, timestamp: '2026-02-10T10:00:00-05:00' }`,
    `reviewContext.timestamp: expected a UTC datetime ending in Z (the reference refuses an offset), received "2026-02-10T10:00:00-05:00"`,
  ],
  [
    `workflow: { definition: { name: w, hops: [{ id: a, role: r }] }, state: { status: running, hops: { a: { status: ready, startedAt: '2026-02-10T10:00:00+01:00' } } } }`,
    `workflow.state.hops.a.startedAt: expected a UTC datetime ending in Z (the reference refuses an offset), received "2026-02-10T10:00:00+01:00"`,
  ],
  [
    `workflow: { definition: { name: w, hops: [{ id: a, role: r, condition: { op: bogus } }] }, state: { status: running, hops: {} } }`,
    `workflow.definition.hops.0.condition.op: expected a condition with op one of eq, neq, gt, gte, lt, lte, in, has_tag, hop_status, and, or, not, true, false, received "bogus"`,
  ],
  [
    `workflow: { definition: { name: w, hops: [{ id: a, role: r, condition: { op: gt, field: x, value: a } }] }, state: { status: running, hops: {} } }`,
    `workflow.definition.hops.0.condition.value: expected a number, received "a"`,
  ],
  [
    `workflow: { definition: { name: w, hops: [{ id: a, role: r, condition: { op: and, conditions: [{ op: not, condition: { op: in, field: f, value: 3 } }] } }] }, state: { status: running, hops: {} } }`,
    `workflow.definition.hops.0.condition.conditions.0.condition.value: expected a list, received 3`,
  ],
  [
    `workflow: { definition: { name: w, hops: [{ id: a, role: r, condition: { op: hop_status, hop: a } }] }, state: { status: running, hops: {} } }`,
    `workflow.definition.hops.0.condition.status: required, missing`,
  ],
  [
    `workflow: { definition: { name: w, hops: [{ id: a, role: r }] }, state: { status: running, hops: { a: { status: ready, result: [1] } } } }`,
    `workflow.state.hops.a.result: expected a mapping, received an array`,
  ],
  [
    'gate: { current: g, entered: 2026-02-10T10:00:00.000Z }\nworkflow: { definition: { name: w, hops: [{ id: a, role: r }] }, state: { status: running, hops: {} } }',
    "workflow: expected 'gate' or 'workflow', not both (the reference's two workflow kinds are exclusive)",
  ],
]

for (const [yaml, message] of CASES) {
  test(
    `lint names ${yaml.split(':')[0]} the way the reference refuses it: ${message}`,
    withFixture(async (f) => {
      await taskWith(f, yaml)
      assert.equal(refused(f), [message])
      // tea still reads, lists and moves the task: it never acts on these keys, and keeps them.
      assert.is((await getTask(f.ctx, T1))!.status, 'backlog')
      await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
      assert.equal(refused(f), [message])
    }),
  )
}

test(
  'values the reference accepts for those keys lint clean',
  withFixture(async (f) => {
    await taskWith(
      f,
      [
        'sla: { maxInProgressMs: 60000, onViolation: block }',
        'contextTier: seed',
        'callbackDepth: 0',
        'instructionsRef: docs/i.md',
        'required_runbook: rb-1',
        'metadata: { a: 1 }',
        'gateHistory: [{ gate: g, role: r, entered: 2026-02-10T10:00:00.000Z, blockers: [] }]',
        'tests: [{ given: a, when: b, then: { status: 200, body_contains: [ok] } }]',
        'workflow: { definition: { name: w, hops: [{ id: a, role: r, joinType: any, condition: { op: or, conditions: [{ op: eq, field: f }, { op: not, condition: { op: has_tag, value: t } }, { op: "true" }] } }] }, state: { status: running, hops: { a: { status: dispatched, startedAt: 2026-02-10T10:00Z, result: { x: 1 } } } } }',
      ].join('\n'),
    )
    assert.equal(lintDataDir(f.ctx), [])
  }),
)

test(
  'lint flags an offset in the lease as the reference refuses it, and an array given for routing or lease is not read',
  withFixture(async (f) => {
    const path = await taskWith(f, 'x_note: 1')
    const good = readFileSync(path, 'utf8')
    writeFileSync(
      path,
      good.replace('x_note: 1', "lease: { agent: a, acquiredAt: '2026-02-10T10:00:00+01:00', expiresAt: 2099-01-01T00:00:00Z }"),
    )
    assert.equal(
      lintDataDir(f.ctx).map((p) => [p.code, p.message]),
      [
        ['lease_not_in_progress', 'has a lease but status is backlog'],
        ['timestamp_offset', 'lease.acquiredAt 2026-02-10T10:00:00+01:00 is not in UTC (Z); the reference implementation rejects offsets'],
      ],
    )
    for (const key of ['routing', 'lease']) {
      writeFileSync(path, good.replace(/^routing:.*\n(?: {2}.*\n)*/m, '').replace('x_note: 1', `${key}: []`))
      const problems = lintDataDir(f.ctx)
      assert.equal(
        problems.map((p) => p.code),
        ['unreadable_task'],
        key,
      )
      assert.match(problems[0]!.message, `${key}: expected a mapping, received an array`)
    }
  }),
)

test(
  'impossible dates are refused as the reference refuses them: 2026-02-30 and T24:00 in a task file, sentAt and dueBy',
  withFixture(async (f) => {
    const path = await taskWith(f, 'x_note: 1')
    const good = readFileSync(path, 'utf8')
    for (const bad of ['2026-02-30T00:00:00.000Z', '2026-02-10T24:00:00.000Z', '2026-13-01T00:00:00Z', '2026-02-10T10:60:00Z']) {
      writeFileSync(path, good.replace(/createdAt: .*/, `createdAt: ${bad}`))
      const problems = lintDataDir(f.ctx)
      assert.equal(
        problems.map((p) => p.code),
        ['unreadable_task'],
        bad,
      )
      assert.match(problems[0]!.message, `createdAt: expected an ISO 8601 datetime of a real date and time`)
      assert.match(problems[0]!.message, bad)
      assert.is(listTasks(f.ctx).tasks.length, 0)
    }
    writeFileSync(path, good.replace(/createdAt: .*/, 'createdAt: 2028-02-29T23:59:59.999Z'))
    assert.equal(lintDataDir(f.ctx), [], 'a leap day is a real date')
    const sent = parseProtocolMessage(completion(T1, {}, { sentAt: '2026-02-30T00:00:00Z' }))
    assert.equal(sent.kind === 'rejected' && sent.issues?.map((i) => i.path), ['sentAt'])
    const due = parseProtocolMessage(handoff(T1, 'TASK-2026-02-09-002', { dueBy: '2026-02-10T24:00:00Z' }))
    assert.equal(due.kind === 'rejected' && due.issues?.map((i) => i.path), ['payload.dueBy'])
  }),
)

test(
  'empty fromAgent, toAgent, projectId, agentId and handoff agents are accepted as the reference accepts them',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const out = await routeMessage(f.ctx, statusUpdate(T1, { agentId: '', progress: 'half' }, { toAgent: '', projectId: '' }))
    assert.equal([out.outcome, out.reason], ['accepted', undefined])
    for (const msg of [
      envelope('handoff.accepted', T1, { taskId: T1, accepted: true }, { fromAgent: '' }),
      handoff(T1, 'TASK-2026-02-09-002', { fromAgent: '', toAgent: '' }),
    ]) {
      const r = parseProtocolMessage(msg)
      assert.is(r.kind, 'envelope')
    }
    // An empty sender is still only heard if it speaks for the task: here it does not.
    const empty = await routeMessage(f.ctx, statusUpdate(T1, { progress: 'x' }, { fromAgent: '' }))
    assert.equal([empty.outcome, empty.reason], ['rejected', 'unauthorized_agent'])
  }),
)

test(
  'a task whose lease.agent is "" is read, listed and linted clean, as the reference reads it',
  withFixture(async (f) => {
    const task = await makeTask(f.ctx, { id: T1 })
    writeFileSync(task.path, readFileSync(task.path, 'utf8').replace('  agent: swe-backend\n  acquiredAt', '  agent: ""\n  acquiredAt'))
    const read = (await getTask(f.ctx, T1))!
    assert.equal((read.data.lease as { agent: string }).agent, '')
    assert.is(listTasks(f.ctx).tasks.length, 1)
    assert.equal(lintDataDir(f.ctx), [])
  }),
)

test.run()
