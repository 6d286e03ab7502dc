/**
 * AOF-BDD scenarios of the protocol router (TASK-058) that touch the store: what a message logs when it is ignored
 * or rejected, which handler each type reaches, a task that is not there, and a handler that fails (TASK-058
 * "Error Resilience" — AOF-BDD-91). Run by bdd-contract.ts on every store.
 */

import * as assert from 'uvu/assert'
import { parseProtocolMessage } from '../../../src/aof/protocol/parse-message.ts'
import { routeOn } from '../../../src/aof/roles/router.ts'
import { readRunResultOn } from '../../../src/aof/roles/run-files.ts'
import type { TaskStore } from '../../../src/aof/store/port.ts'
import { AGENT, type BddSuite, eventsOf, given, sent, statusOf, text } from './bdd-fixtures.ts'
import { MISSING, T1, T2, completion, envelope, handoff, statusUpdate } from '../helpers.ts'

export function routingCases(t: BddSuite): void {
  t('AOF-BDD-28 TASK-058 Ignore non-protocol message', async ({ h }) => {
    assert.equal(parseProtocolMessage('Hello, this is a chat message'), { kind: 'ignored' })
    assert.equal(await routeOn(h.store, 'Hello, this is a chat message'), { outcome: 'ignored' })
    assert.equal(await h.store.readEvents(), [], 'nothing is logged')
  })

  t('AOF-BDD-29 TASK-058 Reject invalid JSON', async ({ h }) => {
    const out = await routeOn(h.store, 'AOF/1 {invalid json')
    assert.equal(out, { outcome: 'rejected', reason: 'invalid_json' })
    const logged = await eventsOf(h.store, 'protocol.message.rejected')
    assert.equal(
      logged.map((p) => [p.reason, p.source, typeof p.error]),
      [['invalid_json', 'aof-prefix', 'string']],
    )
  })

  t('AOF-BDD-30 TASK-058 Reject malformed envelope', async ({ h }) => {
    const out = await routeOn(h.store, JSON.stringify({ protocol: 'aof', version: 1, type: 'completion.report' }))
    assert.is(out.reason, 'invalid_envelope')
    assert.equal(out.issues?.map((i) => i.path).sort(), ['fromAgent', 'payload', 'sentAt', 'taskId', 'toAgent'])
    const [logged, ...more] = await eventsOf(h.store, 'protocol.message.rejected')
    assert.equal(more, [])
    assert.is(logged?.reason, 'invalid_envelope')
    assert.equal((logged?.issues as Array<{ path: string }>).map((i) => i.path).sort(), [
      'fromAgent',
      'payload',
      'sentAt',
      'taskId',
      'toAgent',
    ])
  })

  t(
    'AOF-BDD-31 TASK-058 Route completion.report message: the lease holder report moves the task to review, writes the result for its run and completes the run',
    async ({ h }) => {
      const { store } = h
      const task = await given(store, T1)
      const runId = (await store.readRun(T1))!.runId
      await store.writeFile(task.id, 'outputs/summary.md', new TextEncoder().encode('# done'))
      const out = await routeOn(store, completion(T1, {}, await sent(store)))
      assert.equal(out, {
        outcome: 'accepted',
        taskId: T1,
        type: 'completion.report',
        transitions: [{ from: 'in-progress', to: 'review' }],
      })
      assert.is(await statusOf(store, T1), 'review')
      const result = await readRunResultOn(store, T1)
      assert.equal([result?.runId, result?.outcome], [runId, 'done'])
      assert.is((await store.readRun(T1))?.status, 'completed')
      assert.equal(await receivedTypes(store, T1), ['completion.report'])
      assert.equal(
        (await eventsOf(store, 'task.completed', T1)).map((p) => [p.outcome, p.runId]),
        [['done', runId]],
      )
    },
  )

  t('AOF-BDD-32 TASK-058 Route status.update message: the task moves and the Work Log entry is appended', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(
      store,
      statusUpdate(T1, { status: 'blocked', progress: 'half way', blockers: ['no sensor'] }, await sent(store)),
    )
    assert.equal([out.outcome, out.transitions], ['accepted', [{ from: 'in-progress', to: 'blocked' }]])
    const task = (await store.get(T1))!
    assert.is(task.status, 'blocked')
    assert.match(task.body, 'Progress: half way')
    assert.match(task.body, 'Blockers: no sensor')
    assert.equal(await receivedTypes(store, T1), ['status.update'])
  })

  t('AOF-BDD-33 TASK-058 Route handoff.request message: the child goes to the delegate with inputs/handoff.json and .md', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2, { status: 'ready' })
    const out = await routeOn(store, handoff(T2, T1, {}, await sent(store)))
    assert.equal([out.outcome, out.taskId, out.type], ['accepted', T2, 'handoff.request'])
    const child = (await store.get(T2))!
    assert.equal(child.data.routing, { agent: 'swe-qa', tags: [] })
    assert.is((child.data.metadata as { delegationDepth: number }).delegationDepth, 1)
    assert.equal(await store.listFiles(T2), ['inputs/handoff.json', 'inputs/handoff.md'])
    assert.is(JSON.parse(text(await store.readFile(T2, 'inputs/handoff.json'))!).parentTaskId, T1)
    assert.match(text(await store.readFile(T2, 'inputs/handoff.md'))!, `# Handoff: ${T2}`)
    assert.equal(await receivedTypes(store, T2), ['handoff.request'])
    assert.equal(await eventsOf(store, 'delegation.requested', T2), [{ parentTaskId: T1, toAgent: 'swe-qa' }])
  })

  t('AOF-BDD-34 TASK-058 Route handoff.accepted message', async ({ h }) => {
    const { store } = h
    await given(store, T2, { agent: 'swe-qa' })
    const out = await routeOn(
      store,
      envelope('handoff.accepted', T2, { taskId: T2, accepted: true }, { fromAgent: 'swe-qa', ...(await sent(store)) }),
    )
    assert.equal([out.outcome, out.transitions], ['accepted', []])
    assert.equal(await receivedTypes(store, T2), ['handoff.accepted'])
    assert.equal(await eventsOf(store, 'delegation.accepted', T2), [{}])
    assert.is(await statusOf(store, T2), 'in-progress')
  })

  t('AOF-BDD-35 TASK-058 Route handoff.rejected message: the delegate blocks the child', async ({ h }) => {
    const { store } = h
    await given(store, T2, { agent: 'swe-qa' })
    const msg = envelope(
      'handoff.rejected',
      T2,
      { taskId: T2, accepted: false, reason: 'no capacity' },
      { fromAgent: 'swe-qa', ...(await sent(store)) },
    )
    const out = await routeOn(store, msg)
    assert.equal([out.outcome, out.transitions], ['accepted', [{ from: 'in-progress', to: 'blocked' }]])
    assert.is(await statusOf(store, T2), 'blocked')
    assert.equal(await receivedTypes(store, T2), ['handoff.rejected'])
    assert.equal(await eventsOf(store, 'delegation.rejected', T2), [{ reason: 'no capacity' }])
  })

  t('AOF-BDD-36 TASK-058 Handle unknown message type', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(store, envelope('custom.message', T1, { anything: 1 }, await sent(store)))
    assert.equal(out, { outcome: 'rejected', reason: 'unknown_type', taskId: T1, type: 'custom.message' })
    assert.equal(await eventsOf(store, 'protocol.message.unknown', T1), [{ type: 'custom.message' }])
    assert.equal(await receivedTypes(store, T1), [], 'no handler ran')
  })

  t('AOF-BDD-37 TASK-058 Handle task not found in completion report', async ({ h }) => {
    const { store } = h
    const out = await routeOn(store, completion(MISSING, {}, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'task_not_found'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', MISSING)).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(await eventsOf(store, 'task.transitioned'), [])
    assert.is(await store.readRunFile(MISSING, 'run_result.json'), undefined)
    assert.is(await store.get(MISSING), undefined)
  })

  t('AOF-BDD-38 TASK-058 Handle task not found in status update', async ({ h }) => {
    const { store } = h
    const out = await routeOn(store, statusUpdate(MISSING, { status: 'blocked' }, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'task_not_found'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', MISSING)).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(await eventsOf(store, 'task.transitioned'), [])
    assert.is(await store.get(MISSING), undefined)
  })

  t('AOF-BDD-39 TASK-058 Handle task not found in handoff request', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(store, handoff(MISSING, T1, {}, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'task_not_found'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', MISSING)).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(await eventsOf(store, 'delegation.rejected', MISSING), [{ reason: 'task_not_found', parentTaskId: T1 }])
    assert.is(await store.get(MISSING), undefined)
    assert.equal(await store.listFiles(MISSING), [], 'no handoff artifacts')
  })

  t('AOF-BDD-91 Cross-cutting Protocol router continues on handler error', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    await given(store, T2)
    // The store fails under the handler (a disk full, a server gone) when it writes the run result.
    const failing = new Proxy(store, {
      get: (target, key, receiver) =>
        key === 'writeRunFile' ? async () => Promise.reject(new Error('disk full')) : Reflect.get(target, key, receiver),
    })
    const first = await routeOn(failing, completion(T1, { summaryRef: '' }, await sent(store)))
    assert.equal([first.outcome, first.reason], ['rejected', 'handler_error'])
    assert.equal(
      (await eventsOf(store, 'protocol.message.failed', T1)).map((p) => [p.type, p.error]),
      [['completion.report', 'disk full']],
    )
    assert.is(await statusOf(store, T1), 'in-progress')
    const second = await routeOn(failing, statusUpdate(T2, { notes: 'still routing' }, await sent(store)))
    assert.is(second.outcome, 'accepted')
    assert.match((await store.get(T2))!.body, 'Notes: still routing')
  })

  // --- edge cases beyond the BDD text ---

  t('a sender that neither holds the lease nor is routed is rejected (completion, status, handoff ack); nothing changes', async ({ h }) => {
    const { store } = h
    const before = await given(store, T1)
    const at = await sent(store)
    for (const msg of [
      completion(T1, {}, { fromAgent: 'intruder', ...at }),
      statusUpdate(T1, { notes: 'x' }, { fromAgent: 'intruder', ...at }),
      envelope('handoff.rejected', T1, { taskId: T1, accepted: false }, { fromAgent: 'intruder', ...at }),
    ]) {
      const out = await routeOn(store, msg)
      assert.equal([out.outcome, out.reason], ['rejected', 'unauthorized_agent'])
    }
    const task = (await store.get(T1))!
    assert.equal([task.status, task.body], ['in-progress', before.body])
    assert.equal(
      (await eventsOf(store, 'protocol.message.rejected', T1)).map((p) => [p.reason, p.expected]),
      Array(3).fill(['unauthorized_agent', [AGENT]]),
    )
    assert.is(await store.readRunFile(T1, 'run_result.json'), undefined)
  })

  t('a task nobody holds or is routed to rejects messages as unassigned_task', async ({ h }) => {
    const { store } = h
    await store.create({ id: T1, title: 'orphan', status: 'ready' })
    const out = await routeOn(store, statusUpdate(T1, { notes: 'x' }, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'unassigned_task'])
    assert.not.match((await store.get(T1))!.body, 'Notes: x')
  })

  t('envelope and payload task ids must agree (status.update too)', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(store, statusUpdate(T1, { taskId: T2, notes: 'x' }, await sent(store)))
    assert.equal([out.outcome, out.reason], ['rejected', 'taskId_mismatch'])
    assert.equal(await eventsOf(store, 'protocol.message.rejected', T1), [
      { reason: 'taskId_mismatch', type: 'status.update', payloadTaskId: T2 },
    ])
    assert.not.match((await store.get(T1))!.body, 'Notes: x')
  })

  t('a path-traversal task id is an invalid envelope and never reaches the store', async ({ h }) => {
    const { store } = h
    const out = await routeOn(store, `AOF/1 ${JSON.stringify(completion('TASK-../../etc', {}, await sent(store)))}`)
    assert.equal([out.outcome, out.reason], ['rejected', 'invalid_envelope'])
    assert.equal(
      (await store.readEvents()).map((e) => [e.type, e.taskId]),
      [['protocol.message.rejected', undefined]],
    )
    assert.equal((await store.list()).tasks, [])
  })
}

async function receivedTypes(store: TaskStore, id: string): Promise<unknown[]> {
  return (await eventsOf(store, 'protocol.message.received', id)).map((p) => p.type)
}
