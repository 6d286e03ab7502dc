import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  acquireLease,
  createTask,
  getTask,
  poll,
  readHeartbeat,
  readRun,
  taskLease,
  transitionTask,
  updateTask,
} from '../../../src/aof/index.ts'
import { fsTaskStore } from '../../../src/aof/store/fs/store.ts'
import { claimNextTask, routedTarget } from '../../../src/aof/roles/worker-claim.ts'
import { T1, T2, T3, makeTask, withFixture } from '../helpers.ts'

const never = { canAdopt: () => false }

test(
  'claims the oldest ready task routed to the agent and leases it in a new AOF run',
  withFixture(async (f) => {
    await createTask(f.ctx, { id: T2, title: 'for someone else', agent: 'other', status: 'ready' })
    f.advance(1000)
    await createTask(f.ctx, { id: T3, title: 'older', agent: 'swe', status: 'ready' })
    f.advance(1000)
    await createTask(f.ctx, { id: T1, title: 'newer', agent: 'swe', status: 'ready' })
    const first = await claimNextTask(fsTaskStore(f.ctx), 'swe')
    assert.is(first?.task.id, T3, 'oldest first, not id order')
    assert.is(first!.task.status, 'in-progress')
    assert.is(taskLease(first!.task)?.agent, 'swe')
    assert.is(first!.aofRunId, readRun(f.ctx, T3)!.runId)
    assert.is(first!.adopted, false)
    const second = await claimNextTask(fsTaskStore(f.ctx), 'swe', never)
    assert.is(second?.task.id, T1)
    assert.is(await claimNextTask(fsTaskStore(f.ctx), 'swe', never), undefined)
    assert.is((await getTask(f.ctx, T2))!.status, 'ready', 'a task routed elsewhere is never touched')
  }),
)

test(
  'routing: routing.agent, else routing.role, else routing.team',
  withFixture(async (f) => {
    const task = await createTask(f.ctx, { id: T1, title: 't', status: 'ready' })
    assert.is(routedTarget(task), undefined)
    const byRole = await updateTask(f.ctx, T1, (t) => void (t.data.routing = { role: 'swe', team: 'ops', tags: [] }))
    assert.is(routedTarget(byRole), 'swe')
    const byTeam = await updateTask(f.ctx, T1, (t) => void (t.data.routing = { team: 'ops', tags: [] }))
    assert.is(routedTarget(byTeam), 'ops')
    const byAgent = await updateTask(f.ctx, T1, (t) => void (t.data.routing = { agent: 'qa', role: 'swe', tags: [] }))
    assert.is(routedTarget(byAgent), 'qa')
    assert.is(await claimNextTask(fsTaskStore(f.ctx), 'swe'), undefined, 'routing.agent wins over the role')
    assert.is((await claimNextTask(fsTaskStore(f.ctx), 'qa'))?.task.id, T1)
  }),
)

test(
  'a ready task waits until every task it dependsOn is done',
  withFixture(async (f) => {
    await createTask(f.ctx, { id: T2, title: 'dependency', agent: 'other', status: 'ready' })
    await createTask(f.ctx, { id: T1, title: 'dependent', agent: 'swe', status: 'ready', dependsOn: [T2] })
    assert.is(await claimNextTask(fsTaskStore(f.ctx), 'swe'), undefined)
    await acquireLease(f.ctx, T2, 'other')
    await transitionTask(f.ctx, T2, 'review', { actor: 'test' })
    await transitionTask(f.ctx, T2, 'done', { actor: 'test' })
    assert.is((await claimNextTask(fsTaskStore(f.ctx), 'swe'))?.task.id, T1)
  }),
)

test(
  'two workers of one agent racing for one task: exactly one gets it',
  withFixture(async (f) => {
    await createTask(f.ctx, { id: T1, title: 'contested', agent: 'swe', status: 'ready' })
    const claims = await Promise.all([claimNextTask(fsTaskStore(f.ctx), 'swe', never), claimNextTask(fsTaskStore(f.ctx), 'swe', never)])
    assert.is(claims.filter(Boolean).length, 1, JSON.stringify(claims.map((c) => c?.task.id)))
  }),
)

test(
  'a restarted worker adopts its own unfinished run, keeping the AOF run id; others are left alone',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, agent: 'swe' })
    await makeTask(f.ctx, { id: T2, agent: 'other' })
    const runId = readRun(f.ctx, T1)!.runId
    const beats = readHeartbeat(f.ctx, T1)!.beatCount
    f.advance(700_000) // past the 10-minute lease: the scheduler has not reclaimed it, so it is still ours
    const claim = await claimNextTask(fsTaskStore(f.ctx), 'swe')
    assert.is(claim?.task.id, T1)
    assert.is(claim!.adopted, true)
    assert.is(claim!.aofRunId, runId)
    assert.is(readHeartbeat(f.ctx, T1)!.beatCount, beats + 1, 'adoption beats the heartbeat')
    assert.ok(Date.parse(taskLease(claim!.task)!.expiresAt) > f.ctx.now().getTime(), 'and extends the expired lease')
    assert.is(await claimNextTask(fsTaskStore(f.ctx), 'swe', never), undefined, 'the veto (run alive elsewhere) is honoured')
    assert.is((await getTask(f.ctx, T2))!.status, 'in-progress')
  }),
)

test(
  'a task the scheduler reclaimed is leased afresh: a new AOF run, not an adoption',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, agent: 'swe' })
    const old = readRun(f.ctx, T1)!.runId
    f.advance(301_000)
    await poll(f.ctx)
    assert.is((await getTask(f.ctx, T1))!.status, 'ready')
    const claim = await claimNextTask(fsTaskStore(f.ctx), 'swe')
    assert.is(claim?.adopted, false)
    assert.is.not(claim!.aofRunId, old)
  }),
)

test.run()
