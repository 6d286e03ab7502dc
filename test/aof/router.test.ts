import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { getTask, routeMessage } from '../../src/aof/index.ts'
import { MISSING, T1, T2, completion, envelope, eventTypes, eventsOf, handoff, makeTask, statusUpdate, withFixture } from './helpers.ts'

test(
  'AOF-BDD-31 Route completion.report message',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T1 })
    const out = await routeMessage(ctx, completion(T1))
    assert.is(out.outcome, 'accepted')
    assert.equal(eventsOf(ctx, 'protocol.message.received', T1), [{ type: 'completion.report' }])
    assert.equal(
      eventsOf(ctx, 'task.completed', T1).map((p) => p.outcome),
      ['done'],
    )
  }),
)

test(
  'AOF-BDD-32 Route status.update message',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T1 })
    const out = await routeMessage(ctx, statusUpdate(T1, { progress: 'half' }))
    assert.is(out.outcome, 'accepted')
    assert.equal(eventsOf(ctx, 'protocol.message.received', T1), [{ type: 'status.update' }])
    assert.match((await getTask(ctx, T1))!.body, 'Progress: half')
  }),
)

test(
  'AOF-BDD-33 Route handoff.request message',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T1 })
    await makeTask(ctx, { id: T2, status: 'ready' })
    const out = await routeMessage(ctx, handoff(T2, T1))
    assert.is(out.outcome, 'accepted')
    assert.equal(eventsOf(ctx, 'protocol.message.received', T2), [{ type: 'handoff.request' }])
    assert.equal(eventsOf(ctx, 'delegation.requested', T2).length, 1)
  }),
)

test(
  'AOF-BDD-34 Route handoff.accepted message',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T2, agent: 'swe-qa' })
    const out = await routeMessage(ctx, envelope('handoff.accepted', T2, { taskId: T2, accepted: true }, { fromAgent: 'swe-qa' }))
    assert.is(out.outcome, 'accepted')
    assert.equal(eventsOf(ctx, 'protocol.message.received', T2), [{ type: 'handoff.accepted' }])
    assert.equal(eventsOf(ctx, 'delegation.accepted', T2).length, 1)
  }),
)

test(
  'AOF-BDD-35 Route handoff.rejected message',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T2, agent: 'swe-qa' })
    const out = await routeMessage(
      ctx,
      envelope('handoff.rejected', T2, { taskId: T2, accepted: false, reason: 'no' }, { fromAgent: 'swe-qa' }),
    )
    assert.is(out.outcome, 'accepted')
    assert.equal(eventsOf(ctx, 'protocol.message.received', T2), [{ type: 'handoff.rejected' }])
    assert.is((await getTask(ctx, T2))!.status, 'blocked')
  }),
)

test(
  'AOF-BDD-36 Handle unknown message type',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T1 })
    const out = await routeMessage(ctx, envelope('custom.message', T1, { anything: 1 }))
    assert.equal(out, { outcome: 'rejected', reason: 'unknown_type', taskId: T1, type: 'custom.message' })
    assert.equal(eventsOf(ctx, 'protocol.message.unknown', T1), [{ type: 'custom.message' }])
    assert.equal(eventsOf(ctx, 'protocol.message.received', T1), [])
  }),
)

test(
  'AOF-BDD-37 Handle task not found in completion report',
  withFixture(async ({ ctx, dir }) => {
    const out = await routeMessage(ctx, completion(MISSING))
    assert.equal([out.outcome, out.reason], ['rejected', 'task_not_found'])
    assert.equal(
      eventsOf(ctx, 'protocol.message.rejected', MISSING).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(eventsOf(ctx, 'task.transitioned'), [])
    assert.not.ok(existsSync(join(dir, 'state', 'runs', MISSING)))
  }),
)

test(
  'AOF-BDD-38 Handle task not found in status update',
  withFixture(async ({ ctx }) => {
    const out = await routeMessage(ctx, statusUpdate(MISSING, { status: 'blocked' }))
    assert.is(out.reason, 'task_not_found')
    assert.equal(
      eventsOf(ctx, 'protocol.message.rejected', MISSING).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(eventsOf(ctx, 'task.transitioned'), [])
  }),
)

test(
  'AOF-BDD-39 Handle task not found in handoff request',
  withFixture(async ({ ctx, dir }) => {
    await makeTask(ctx, { id: T1 })
    const out = await routeMessage(ctx, handoff(MISSING, T1))
    assert.is(out.reason, 'task_not_found')
    assert.equal(
      eventsOf(ctx, 'protocol.message.rejected', MISSING).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.equal(
      eventsOf(ctx, 'delegation.rejected', MISSING).map((p) => p.reason),
      ['task_not_found'],
    )
    assert.not.ok(existsSync(join(dir, 'tasks', 'ready', MISSING)))
  }),
)

test(
  'AOF-BDD-91 Protocol router continues on handler error',
  withFixture(async ({ ctx, dir }) => {
    await makeTask(ctx, { id: T1 })
    await makeTask(ctx, { id: T2 })
    // A file where the run folder should be: writing run_result.json fails with ENOTDIR.
    mkdirSync(join(dir, 'state', 'runs'), { recursive: true })
    writeFileSync(join(dir, 'state', 'runs', 'x'), '')
    const runDir = join(dir, 'state', 'runs', T1)
    rmSync(runDir, { recursive: true, force: true })
    writeFileSync(runDir, 'not a folder')
    const first = await routeMessage(ctx, completion(T1))
    assert.equal([first.outcome, first.reason], ['rejected', 'handler_error'])
    const [failed] = eventsOf(ctx, 'protocol.message.failed', T1)
    assert.is(failed?.type, 'completion.report')
    assert.type(failed?.error, 'string')
    const second = await routeMessage(ctx, statusUpdate(T2, { notes: 'still routing' }))
    assert.is(second.outcome, 'accepted')
    assert.match((await getTask(ctx, T2))!.body, 'still routing')
  }),
)

test(
  'a sender that neither holds the lease nor is routed is rejected (completion, status, handoff ack)',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T1 })
    const before = (await getTask(ctx, T1))!.body
    for (const msg of [
      completion(T1, {}, { fromAgent: 'intruder' }),
      statusUpdate(T1, { notes: 'x' }, { fromAgent: 'intruder' }),
      envelope('handoff.rejected', T1, { taskId: T1, accepted: false }, { fromAgent: 'intruder' }),
    ]) {
      const out = await routeMessage(ctx, msg)
      assert.equal([out.outcome, out.reason], ['rejected', 'unauthorized_agent'])
    }
    const task = (await getTask(ctx, T1))!
    assert.is(task.status, 'in-progress')
    assert.is(task.body, before)
    assert.equal(eventsOf(ctx, 'protocol.message.rejected', T1)[0]?.expected, ['swe-backend'])
  }),
)

test(
  'a task nobody holds or is routed to rejects messages as unassigned_task',
  withFixture(async ({ ctx }) => {
    const { createTask } = await import('../../src/aof/index.ts')
    await createTask(ctx, { id: T1, title: 'orphan', status: 'ready' })
    const out = await routeMessage(ctx, statusUpdate(T1, { notes: 'x' }))
    assert.is(out.reason, 'unassigned_task')
  }),
)

test(
  'envelope and payload task ids must agree (status.update too)',
  withFixture(async ({ ctx }) => {
    await makeTask(ctx, { id: T1 })
    const msg = statusUpdate(T1, { taskId: T2, notes: 'x' })
    const out = await routeMessage(ctx, msg)
    assert.is(out.reason, 'taskId_mismatch')
  }),
)

test(
  'a path-traversal task id never reaches the filesystem',
  withFixture(async ({ ctx, dir }) => {
    const out = await routeMessage(ctx, `AOF/1 ${JSON.stringify(completion('TASK-../../etc'))}`)
    assert.equal([out.outcome, out.reason], ['rejected', 'invalid_envelope'])
    assert.not.ok(existsSync(join(dir, 'locks')))
    assert.not.ok(existsSync(join(dir, 'state')))
  }),
)

test(
  'a task whose file is broken is reported as task_unreadable; other tasks keep working',
  withFixture(async ({ ctx, dir }) => {
    await makeTask(ctx, { id: T1 })
    await makeTask(ctx, { id: T2 })
    writeFileSync(join(dir, 'tasks', 'in-progress', `${T1}.md`), '---\ntitle: [unclosed\n---\nbody\n')
    const bad = await routeMessage(ctx, statusUpdate(T1, { notes: 'x' }))
    assert.equal([bad.outcome, bad.reason], ['rejected', 'task_unreadable'])
    const good = await routeMessage(ctx, statusUpdate(T2, { notes: 'y' }))
    assert.is(good.outcome, 'accepted')
    assert.ok(eventTypes(ctx, T1).includes('protocol.message.failed'))
  }),
)

test.run()
