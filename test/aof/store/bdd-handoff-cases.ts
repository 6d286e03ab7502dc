/**
 * AOF-BDD scenarios of handoffs (TASK-060: requests, acknowledgments, the delegation depth guard, and the
 * cross-cutting duplicate request): the child's metadata and routing in the task, its `inputs/handoff.json` and
 * `.md` as companion files — read back through the port, wherever the store keeps them. Run by bdd-contract.ts.
 */

import * as assert from 'uvu/assert'
import { routeOn } from '../../../src/aof/roles/router.ts'
import { taskMetadata } from '../../../src/aof/protocol/task-file.ts'
import { type BddSuite, T4, eventsOf, given, lastMove, movesOf, sent, statusOf, text, withId } from './bdd-fixtures.ts'
import { MISSING, T1, T2, T3, envelope, handoff } from '../helpers.ts'

const FULL = {
  acceptanceCriteria: ['All tests pass', 'Docs updated'],
  expectedOutputs: ['tests/report.md'],
  contextRefs: ['tasks/in-progress/TASK-2026-02-09-001.md', 'docs/design.md'],
  constraints: ['No new dependencies'],
  dueBy: '2026-02-11T12:00:00.000Z',
}

const ARTIFACTS = ['inputs/handoff.json', 'inputs/handoff.md']

export function handoffCases(t: BddSuite): void {
  t('AOF-BDD-62 TASK-060 Valid handoff request creates artifacts', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    const out = await routeOn(store, handoff(T2, T1, { acceptanceCriteria: ['All tests pass', 'Docs updated'] }, await sent(store)))
    assert.is(out.outcome, 'accepted')
    assert.equal(await store.listFiles(T2), ARTIFACTS)
    assert.equal(JSON.parse(text(await store.readFile(T2, 'inputs/handoff.json'))!).acceptanceCriteria, ['All tests pass', 'Docs updated'])
    assert.equal(await eventsOf(store, 'delegation.requested', T2), [{ parentTaskId: T1, toAgent: 'swe-qa' }])
  })

  t('AOF-BDD-63 TASK-060 Handoff artifacts include all payload fields', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    await routeOn(store, handoff(T2, T1, FULL, await sent(store)))
    const json = JSON.parse(text(await store.readFile(T2, 'inputs/handoff.json'))!)
    assert.equal(json, { taskId: T2, parentTaskId: T1, fromAgent: 'swe-backend', toAgent: 'swe-qa', ...FULL })
    const md = text(await store.readFile(T2, 'inputs/handoff.md'))!
    for (const line of [
      `# Handoff: ${T2}`,
      '## Acceptance Criteria',
      '- All tests pass',
      '- tests/report.md',
      '- tasks/in-progress/TASK-2026-02-09-001.md',
      '- docs/design.md',
      '- No new dependencies',
      '**Due By:** 2026-02-11T12:00:00.000Z',
    ]) {
      assert.ok(md.includes(line), line)
    }
    assert.equal(json.contextRefs, FULL.contextRefs, 'contextRefs kept as a list')
  })

  t('AOF-BDD-64 TASK-060 Handoff request updates child metadata with delegation depth', async ({ h }) => {
    const { store } = h
    await given(store, T1, { metadata: { delegationDepth: 0 } })
    const child = await given(store, T2, { status: 'ready' })
    assert.is(taskMetadata(child).delegationDepth, undefined)
    await routeOn(store, handoff(T2, T1, {}, await sent(store)))
    const after = (await store.get(T2))!
    assert.is(taskMetadata(after).delegationDepth, 1)
    assert.ok(Date.parse(String(after.data.updatedAt)) > Date.parse(String(child.data.updatedAt)), 'updatedAt moved on')
    assert.equal(after.data.routing, { agent: 'swe-qa', tags: [] })
    assert.is(after.status, 'ready')
  })

  t('AOF-BDD-65 TASK-060 Nested delegation rejected - depth exceeds limit', async ({ h }) => {
    const { store } = h
    await given(store, T1, { metadata: { delegationDepth: 1 } })
    const child = await given(store, T2, { status: 'ready' })
    const out = await routeOn(store, handoff(T2, T1, {}, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'nested_delegation'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', T2)).map((p) => p.reason),
      ['nested_delegation'],
    )
    assert.equal(
      (await eventsOf(store, 'delegation.rejected', T2)).map((p) => p.reason),
      ['nested_delegation'],
    )
    assert.equal(await store.listFiles(T2), [], 'no handoff artifacts')
    assert.equal((await store.get(T2))!.data, child.data, 'the child is not updated')
  })

  t('AOF-BDD-66 TASK-060 Handoff request with taskId mismatch', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    const out = await routeOn(store, handoff(T2, T1, { taskId: T3 }, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'taskId_mismatch'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', T2)).map((p) => p.reason),
      ['taskId_mismatch'],
    )
    assert.equal(await store.listFiles(T2), [])
  })

  t('AOF-BDD-67 TASK-060 Handoff request with missing parent task', async ({ h }) => {
    const { store } = h
    await given(store, T2, { status: 'ready' })
    const out = await routeOn(store, handoff(T2, MISSING, {}, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'parent_not_found'])
    assert.equal(await eventsOf(store, 'delegation.rejected', T2), [{ reason: 'parent_not_found', parentTaskId: MISSING }])
    assert.equal(await store.listFiles(T2), [])
  })

  t('AOF-BDD-68 TASK-060 Handoff accepted acknowledgment', async ({ h }) => {
    const { store } = h
    await given(store, T2, { agent: 'swe-qa' })
    const before = await movesOf(store, T2)
    const out = await routeOn(
      store,
      envelope('handoff.accepted', T2, { taskId: T2, accepted: true }, { fromAgent: 'swe-qa', ...(await sent(store)) }),
    )
    assert.equal([out.outcome, out.transitions], ['accepted', []])
    assert.is((await eventsOf(store, 'delegation.accepted', T2)).length, 1)
    assert.is(await statusOf(store, T2), 'in-progress')
    assert.equal(await movesOf(store, T2), before)
  })

  t('AOF-BDD-69 TASK-060 Handoff rejected acknowledgment transitions to blocked', async ({ h }) => {
    const { store } = h
    await given(store, T2, { agent: 'swe-qa' })
    const msg = envelope(
      'handoff.rejected',
      T2,
      { taskId: T2, accepted: false, reason: 'Insufficient context' },
      { fromAgent: 'swe-qa', ...(await sent(store)) },
    )
    await routeOn(store, msg)
    assert.is(await statusOf(store, T2), 'blocked')
    const last = await lastMove(store, T2)
    assert.equal([last?.to, last?.reason], ['blocked', 'Insufficient context'])
    assert.equal(await eventsOf(store, 'delegation.rejected', T2), [{ reason: 'Insufficient context' }])
  })

  t('AOF-BDD-70 TASK-060 Handoff acknowledgment with missing task', async ({ h }) => {
    const { store } = h
    const out = await routeOn(store, envelope('handoff.accepted', MISSING, { taskId: MISSING, accepted: true }, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'task_not_found'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', MISSING)).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(await eventsOf(store, 'task.transitioned'), [])
  })

  t('AOF-BDD-71 TASK-060 Root task has delegation depth 0', async ({ h }) => {
    const { store } = h
    const task = await store.create({ title: 'root' })
    assert.is(taskMetadata(task).delegationDepth ?? 0, 0)
    assert.is(taskMetadata((await store.get(task.id))!).delegationDepth ?? 0, 0)
  })

  t('AOF-BDD-72 TASK-060 First-level delegation sets depth to 1', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    assert.is((await routeOn(store, handoff(T2, T1, {}, await sent(store)))).outcome, 'accepted')
    assert.is(taskMetadata((await store.get(T2))!).delegationDepth, 1)
  })

  t('AOF-BDD-73 TASK-060 Second-level delegation is rejected', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    await given(store, T3, { status: 'ready' })
    assert.is((await routeOn(store, handoff(T2, T1, {}, await sent(store)))).outcome, 'accepted')
    // T2 (depth 1, now routed to swe-qa) tries to delegate T3: refused before any artifact is written.
    const out = await routeOn(store, handoff(T3, T2, { fromAgent: 'swe-qa' }, { fromAgent: 'swe-qa', ...(await sent(store)) }))
    assert.equal([out.outcome, out.reason], ['rejected', 'nested_delegation'])
    assert.equal(await store.listFiles(T3), [])
    assert.equal(
      (await eventsOf(store, 'delegation.rejected', T3)).map((p) => p.reason),
      ['nested_delegation'],
    )
  })

  t('AOF-BDD-74 TASK-060 Depth guard checks parent depth, not child depth', async ({ h }) => {
    const { store } = h
    await given(store, T1, { metadata: { delegationDepth: 1 } })
    await given(store, T2, { status: 'ready' })
    const out = await routeOn(store, handoff(T2, T1, {}, await sent(store)))
    assert.is(out.reason, 'nested_delegation')
    assert.equal(await eventsOf(store, 'delegation.rejected', T2), [
      { reason: 'nested_delegation', parentTaskId: T1, parentDepth: 1, maxDepth: 1 },
    ])
    // A child already carrying a depth does not matter when the parent is a root.
    await given(store, T3, { status: 'ready', metadata: { delegationDepth: 5 } })
    await given(store, T4)
    assert.is((await routeOn(store, handoff(T3, T4, {}, await sent(store)))).outcome, 'accepted')
    assert.is(taskMetadata((await store.get(T3))!).delegationDepth, 1)
  })

  t('AOF-BDD-90 Cross-cutting Duplicate handoff requests are idempotent', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    // The same request received again, as its own message (the byte-for-byte re-send is below).
    const msg = handoff(T2, T1, FULL, await sent(store))
    assert.is((await routeOn(store, withId(msg, 'handoff-1'))).outcome, 'accepted')
    const json = await store.readFile(T2, 'inputs/handoff.json')
    const md = await store.readFile(T2, 'inputs/handoff.md')
    assert.is((await routeOn(store, withId(msg, 'handoff-1-again'))).outcome, 'accepted')
    assert.equal(await store.readFile(T2, 'inputs/handoff.json'), json, 'handoff.json rewritten the same')
    assert.equal(await store.readFile(T2, 'inputs/handoff.md'), md, 'handoff.md rewritten the same')
    assert.equal(await store.listFiles(T2), ARTIFACTS)
    assert.is(taskMetadata((await store.get(T2))!).delegationDepth, 1, 'depth unchanged')
    assert.is((await eventsOf(store, 'delegation.requested', T2)).length, 2, 'delegation.requested logged again')
  })

  // --- edge cases beyond the BDD text ---

  t(
    'the same handoff sent twice byte for byte: routed again to the same effect on the filesystem, known as a duplicate on NATS',
    async ({ h }) => {
      const { store } = h
      await given(store, T1)
      await given(store, T2, { status: 'ready' })
      const msg = handoff(T2, T1, FULL, await sent(store))
      assert.is((await routeOn(store, msg)).outcome, 'accepted')
      const again = await routeOn(store, msg)
      if (store.kind === 'nats') assert.equal(again, { outcome: 'ignored', reason: 'duplicate', taskId: T2, type: 'handoff.request' })
      else assert.is(again.outcome, 'accepted')
      assert.is(taskMetadata((await store.get(T2))!).delegationDepth, 1)
      assert.is((await eventsOf(store, 'delegation.requested', T2)).length, store.kind === 'nats' ? 1 : 2)
    },
  )

  t('empty handoff lists render as None', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    await routeOn(store, handoff(T2, T1, {}, await sent(store)))
    const md = text(await store.readFile(T2, 'inputs/handoff.md'))!
    assert.is(md.match(/^None$/gm)?.length, 4)
  })

  t('a rejected handoff on a task that cannot move logs no phantom transition', async ({ h }) => {
    const { store } = h
    await given(store, T2, { agent: 'swe-qa', status: 'done' })
    const before = await movesOf(store, T2)
    const out = await routeOn(
      store,
      envelope('handoff.rejected', T2, { taskId: T2, accepted: false }, { fromAgent: 'swe-qa', ...(await sent(store)) }),
    )
    assert.equal([out.outcome, out.transitions], ['accepted', []])
    assert.is(await statusOf(store, T2), 'done')
    assert.equal(await movesOf(store, T2), before)
    assert.equal(await eventsOf(store, 'delegation.rejected', T2), [{ reason: 'handoff_rejected' }])
  })

  t('a handoff from an agent that holds neither the parent nor the child is refused', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    const out = await routeOn(store, handoff(T2, T1, {}, { fromAgent: 'intruder', ...(await sent(store)) }))
    assert.equal([out.outcome, out.reason], ['rejected', 'unauthorized_agent'])
    assert.equal(await store.listFiles(T2), [])
    assert.is(taskMetadata((await store.get(T2))!).delegationDepth, undefined)
  })
}
