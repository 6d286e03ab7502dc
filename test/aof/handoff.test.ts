import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createTask, getTask, routeMessage, taskMetadata } from '../../src/aof/index.ts'
import { MISSING, T1, T2, T3, envelope, eventsOf, fixture, handoff, makeTask, withFixture, type Fixture } from './helpers.ts'

type F = Fixture

const inputs = (f: F, status: string, id: string) => join(f.dir, 'tasks', status, id, 'inputs')
const FULL = {
  acceptanceCriteria: ['All tests pass', 'Docs updated'],
  expectedOutputs: ['tests/report.md'],
  contextRefs: ['tasks/in-progress/TASK-2026-02-09-001.md', 'docs/design.md'],
  constraints: ['No new dependencies'],
  dueBy: '2026-02-11T12:00:00.000Z',
}

test(
  'AOF-BDD-62 Valid handoff request creates artifacts',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const out = await routeMessage(f.ctx, handoff(T2, T1, { acceptanceCriteria: ['All tests pass', 'Docs updated'] }))
    assert.is(out.outcome, 'accepted')
    assert.ok(existsSync(join(inputs(f, 'ready', T2), 'handoff.json')))
    assert.ok(existsSync(join(inputs(f, 'ready', T2), 'handoff.md')))
    assert.equal(eventsOf(f.ctx, 'delegation.requested', T2), [{ parentTaskId: T1, toAgent: 'swe-qa' }])
  }),
)

test(
  'AOF-BDD-63 Handoff artifacts include all payload fields',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    await routeMessage(f.ctx, handoff(T2, T1, FULL))
    const json = JSON.parse(readFileSync(join(inputs(f, 'ready', T2), 'handoff.json'), 'utf8'))
    assert.equal(json, { taskId: T2, parentTaskId: T1, fromAgent: 'swe-backend', toAgent: 'swe-qa', ...FULL })
    const md = readFileSync(join(inputs(f, 'ready', T2), 'handoff.md'), 'utf8')
    for (const line of [
      '## Acceptance Criteria',
      '- All tests pass',
      '- tests/report.md',
      '- docs/design.md',
      '- No new dependencies',
      '**Due By:** 2026-02-11T12:00:00.000Z',
    ]) {
      assert.ok(md.includes(line), line)
    }
    assert.ok(Array.isArray(json.contextRefs) && json.contextRefs.length === 2)
  }),
)

test(
  'empty handoff lists render as None',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    await routeMessage(f.ctx, handoff(T2, T1))
    const md = readFileSync(join(inputs(f, 'ready', T2), 'handoff.md'), 'utf8')
    assert.is(md.match(/^None$/gm)?.length, 4)
  }),
)

test(
  'AOF-BDD-64 Handoff request updates child metadata with delegation depth',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, metadata: { delegationDepth: 0 } })
    const child = await makeTask(f.ctx, { id: T2, status: 'ready' })
    f.advance(1000)
    await routeMessage(f.ctx, handoff(T2, T1))
    const after = (await getTask(f.ctx, T2))!
    assert.is(taskMetadata(after).delegationDepth, 1)
    assert.ok(Date.parse(String(after.data.updatedAt)) > Date.parse(String(child.data.updatedAt)))
    assert.equal(after.data.routing, { agent: 'swe-qa', tags: [] })
    // Written atomically: no temp file is left next to it.
    assert.equal(
      readdirSync(join(f.dir, 'tasks', 'ready')).filter((n) => n.startsWith('.')),
      [],
    )
  }),
)

test(
  'AOF-BDD-65 Nested delegation rejected - depth exceeds limit',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, metadata: { delegationDepth: 1 } })
    const child = await makeTask(f.ctx, { id: T2, status: 'ready' })
    const out = await routeMessage(f.ctx, handoff(T2, T1))
    assert.equal([out.outcome, out.reason], ['rejected', 'nested_delegation'])
    assert.equal(
      eventsOf(f.ctx, 'protocol.message.rejected', T2).map((p) => p.reason),
      ['nested_delegation'],
    )
    assert.equal(
      eventsOf(f.ctx, 'delegation.rejected', T2).map((p) => p.reason),
      ['nested_delegation'],
    )
    assert.not.ok(existsSync(join(inputs(f, 'ready', T2), 'handoff.json')))
    assert.equal((await getTask(f.ctx, T2))!.data, child.data)
  }),
)

test(
  'AOF-BDD-66 Handoff request with taskId mismatch',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const msg = handoff(T2, T1, { taskId: T3 })
    const out = await routeMessage(f.ctx, msg)
    assert.equal([out.outcome, out.reason], ['rejected', 'taskId_mismatch'])
    assert.equal(
      eventsOf(f.ctx, 'protocol.message.rejected', T2).map((p) => p.reason),
      ['taskId_mismatch'],
    )
    assert.not.ok(existsSync(join(inputs(f, 'ready', T2), 'handoff.json')))
  }),
)

test(
  'AOF-BDD-67 Handoff request with missing parent task',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const out = await routeMessage(f.ctx, handoff(T2, MISSING))
    assert.is(out.reason, 'parent_not_found')
    assert.equal(
      eventsOf(f.ctx, 'delegation.rejected', T2).map((p) => p.reason),
      ['parent_not_found'],
    )
    assert.not.ok(existsSync(join(inputs(f, 'ready', T2), 'handoff.json')))
  }),
)

test(
  'AOF-BDD-68 Handoff accepted acknowledgment',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T2, agent: 'swe-qa' })
    const out = await routeMessage(f.ctx, envelope('handoff.accepted', T2, { taskId: T2, accepted: true }, { fromAgent: 'swe-qa' }))
    assert.equal(out.transitions, [])
    assert.equal(eventsOf(f.ctx, 'delegation.accepted', T2).length, 1)
    assert.is((await getTask(f.ctx, T2))!.status, 'in-progress')
  }),
)

test(
  'AOF-BDD-69 Handoff rejected acknowledgment transitions to blocked',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T2, agent: 'swe-qa' })
    await routeMessage(
      f.ctx,
      envelope('handoff.rejected', T2, { taskId: T2, accepted: false, reason: 'Insufficient context' }, { fromAgent: 'swe-qa' }),
    )
    assert.is((await getTask(f.ctx, T2))!.status, 'blocked')
    const last = eventsOf(f.ctx, 'task.transitioned', T2).at(-1)!
    assert.equal([last.to, last.reason], ['blocked', 'Insufficient context'])
    assert.equal(eventsOf(f.ctx, 'delegation.rejected', T2), [{ reason: 'Insufficient context' }])
  }),
)

test(
  'a rejected handoff on a task that cannot move logs no phantom transition',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T2, agent: 'swe-qa', status: 'done' })
    const before = eventsOf(f.ctx, 'task.transitioned', T2).length
    await routeMessage(f.ctx, envelope('handoff.rejected', T2, { taskId: T2, accepted: false }, { fromAgent: 'swe-qa' }))
    assert.is((await getTask(f.ctx, T2))!.status, 'done')
    assert.is(eventsOf(f.ctx, 'task.transitioned', T2).length, before)
    assert.equal(eventsOf(f.ctx, 'delegation.rejected', T2), [{ reason: 'handoff_rejected' }])
  }),
)

test(
  'AOF-BDD-70 Handoff acknowledgment with missing task',
  withFixture(async (f) => {
    const out = await routeMessage(f.ctx, envelope('handoff.accepted', MISSING, { taskId: MISSING, accepted: true }))
    assert.is(out.reason, 'task_not_found')
    assert.equal(
      eventsOf(f.ctx, 'protocol.message.rejected', MISSING).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(eventsOf(f.ctx, 'task.transitioned', MISSING), [])
  }),
)

test(
  'AOF-BDD-71 Root task has delegation depth 0',
  withFixture(async (f) => {
    const task = await createTask(f.ctx, { title: 'root' })
    assert.is(taskMetadata(task).delegationDepth ?? 0, 0)
  }),
)

test(
  'AOF-BDD-72 First-level delegation sets depth to 1',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    await routeMessage(f.ctx, handoff(T2, T1))
    assert.is(taskMetadata((await getTask(f.ctx, T2))!).delegationDepth, 1)
  }),
)

test(
  'AOF-BDD-73 Second-level delegation is rejected',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    await makeTask(f.ctx, { id: T3, status: 'ready' })
    assert.is((await routeMessage(f.ctx, handoff(T2, T1))).outcome, 'accepted')
    // T2 (depth 1) now tries to delegate T3: refused before any artifact is written.
    const out = await routeMessage(f.ctx, handoff(T3, T2, { fromAgent: 'swe-qa' }, { fromAgent: 'swe-qa' }))
    assert.is(out.reason, 'nested_delegation')
    assert.not.ok(existsSync(join(inputs(f, 'ready', T3), 'handoff.json')))
    assert.equal(
      eventsOf(f.ctx, 'delegation.rejected', T3).map((p) => p.reason),
      ['nested_delegation'],
    )
  }),
)

test(
  'AOF-BDD-74 Depth guard checks parent depth, not child depth',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, metadata: { delegationDepth: 1 } })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const out = await routeMessage(f.ctx, handoff(T2, T1))
    assert.is(out.reason, 'nested_delegation')
    assert.equal(eventsOf(f.ctx, 'delegation.rejected', T2)[0], {
      reason: 'nested_delegation',
      parentTaskId: T1,
      parentDepth: 1,
      maxDepth: 1,
    })
    // A child already carrying a depth does not matter when the parent is a root.
    await makeTask(f.ctx, { id: T3, status: 'ready', metadata: { delegationDepth: 5 } })
    const parent = await makeTask(f.ctx, { id: 'TASK-2026-02-09-004' })
    assert.is((await routeMessage(f.ctx, handoff(T3, parent.id))).outcome, 'accepted')
  }),
)

test(
  'AOF-BDD-90 Duplicate handoff requests are idempotent',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const msg = handoff(T2, T1, FULL)
    await routeMessage(f.ctx, msg)
    const json1 = readFileSync(join(inputs(f, 'ready', T2), 'handoff.json'), 'utf8')
    const out = await routeMessage(f.ctx, msg)
    assert.is(out.outcome, 'accepted')
    assert.is(readFileSync(join(inputs(f, 'ready', T2), 'handoff.json'), 'utf8'), json1)
    assert.is(taskMetadata((await getTask(f.ctx, T2))!).delegationDepth, 1)
    assert.is(eventsOf(f.ctx, 'delegation.requested', T2).length, 2)
  }),
)

test(
  'a handoff from an agent that holds neither the parent nor the child is refused',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const out = await routeMessage(f.ctx, handoff(T2, T1, {}, { fromAgent: 'intruder' }))
    assert.is(out.reason, 'unauthorized_agent')
    assert.not.ok(existsSync(join(inputs(f, 'ready', T2), 'handoff.json')))
  }),
)

test.run()
