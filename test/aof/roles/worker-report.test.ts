import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { acquireLease, getTask, poll, readRun, readRunResult, routeMessage } from '../../../src/aof/index.ts'
import { completionFromState } from '../../../src/aof/protocol/worker-completion.ts'
import { reportCompletion } from '../../../src/aof/roles/worker-report.ts'
import { fsTaskStore } from '../../../src/aof/store/fs/store.ts'
import { T1, completion, eventTypes, eventsOf, makeTask, withFixture } from '../helpers.ts'

const agentId = 'swe-backend'

test(
  'the worker reports to its own run: accepted, task to review, run_result tagged with the run id',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, agent: agentId })
    const aofRunId = readRun(f.ctx, T1)!.runId!
    f.advance(1000)
    const r = await reportCompletion(fsTaskStore(f.ctx), { taskId: T1, agentId, aofRunId }, completionFromState({ summary: 'calibrated' }))
    assert.equal(r.kind === 'sent' && [r.route.outcome, r.outcome, r.status], ['accepted', 'done', 'review'])
    const result = readRunResult(f.ctx, T1)!
    assert.equal([result.runId, result.outcome, result.notes, result.agentId], [aofRunId, 'done', 'calibrated', agentId])
    assert.is(readRun(f.ctx, T1)!.status, 'completed')
    const types = eventTypes(f.ctx, T1)
    assert.ok(types.includes('protocol.message.received') && types.includes('task.completed'), types.join(','))
  }),
)

test(
  'a report for a run that was reclaimed and leased again is not delivered',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, agent: agentId })
    const old = readRun(f.ctx, T1)!.runId!
    f.advance(301_000)
    await poll(f.ctx)
    await acquireLease(f.ctx, T1, agentId)
    const r = await reportCompletion(fsTaskStore(f.ctx), { taskId: T1, agentId, aofRunId: old }, completionFromState({}))
    assert.equal(r, { kind: 'lost', status: 'in-progress' })
    assert.is(readRunResult(f.ctx, T1), undefined, 'the new run gets no result from the old one')
    assert.is(readRun(f.ctx, T1)!.status, 'running')
    assert.is(eventsOf(f.ctx, 'task.completed', T1).length, 0)
  }),
)

test(
  'an agent that reported itself (aof.report) is not reported again; its outcome is returned',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, agent: agentId })
    const aofRunId = readRun(f.ctx, T1)!.runId!
    const own = await routeMessage(f.ctx, completion(T1, { outcome: 'blocked', blockers: ['API key needed'] }))
    assert.is(own.outcome, 'accepted')
    const r = await reportCompletion(fsTaskStore(f.ctx), { taskId: T1, agentId, aofRunId }, completionFromState({ outcome: 'done' }))
    assert.equal(r, { kind: 'agent', outcome: 'blocked', status: 'blocked' })
    assert.is(readRunResult(f.ctx, T1)!.outcome, 'blocked')
    assert.is(eventsOf(f.ctx, 'task.completed', T1).length, 1)
  }),
)

test(
  'a report the handler refuses comes back as sent + rejected, with its reason',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, agent: agentId })
    const aofRunId = readRun(f.ctx, T1)!.runId!
    const r = await reportCompletion(fsTaskStore(f.ctx), { taskId: T1, agentId: 'intruder', aofRunId }, completionFromState({}))
    assert.equal(r.kind === 'sent' && [r.route.outcome, r.route.reason], ['rejected', 'unauthorized_agent'])
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
  }),
)

test.run()
