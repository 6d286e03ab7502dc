import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createTask, getTask, routeMessage } from '../../../src/aof/index.ts'
import { workerInitialState, workerRunId, workerTaskState } from '../../../src/aof/roles/worker-task-state.ts'
import { readHandoffInputs } from '../../../src/aof/store/fs/handoff-inputs.ts'
import { T1, T2, handoff, makeTask, withFixture } from '../helpers.ts'

test(
  'the task becomes state.task {id, title, body, inputs, metadata} plus agent_id',
  withFixture(async (f) => {
    const task = await createTask(f.ctx, {
      id: T1,
      title: 'Calibrate',
      body: '## Instructions\nDo it.\n',
      agent: 'swe',
      status: 'ready',
      metadata: { reviewRequired: false, x: 1 },
    })
    assert.equal(workerTaskState(task, 'swe', readHandoffInputs(f.ctx, task)), {
      task: { id: T1, title: 'Calibrate', body: '## Instructions\nDo it.', inputs: {}, metadata: { reviewRequired: false, x: 1 } },
      agent_id: 'swe',
    })
  }),
)

test(
  'handoff inputs: inputs/handoff.json written by a handoff.request is state.task.inputs',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, agent: 'swe-backend' })
    await createTask(f.ctx, { id: T2, title: 'child', status: 'ready', parentId: T1 })
    const out = await routeMessage(f.ctx, handoff(T2, T1, { acceptanceCriteria: ['tests pass'] }))
    assert.is(out.outcome, 'accepted', JSON.stringify(out))
    const child = (await getTask(f.ctx, T2))!
    const state = workerTaskState(child, 'swe-qa', readHandoffInputs(f.ctx, child)) as { task: { inputs: Record<string, unknown> } }
    assert.equal(state.task.inputs.acceptanceCriteria, ['tests pass'])
    assert.is(state.task.inputs.parentTaskId, T1)
    assert.is(state.task.inputs.toAgent, 'swe-qa')
  }),
)

test(
  'a broken handoff.json gives empty inputs instead of stopping the work',
  withFixture(async (f) => {
    const task = await createTask(f.ctx, { id: T1, title: 't', status: 'ready' })
    mkdirSync(join(f.dir, 'tasks/ready', T1, 'inputs'), { recursive: true })
    writeFileSync(join(f.dir, 'tasks/ready', T1, 'inputs/handoff.json'), '{not json')
    assert.equal((workerTaskState(task, 'a', readHandoffInputs(f.ctx, task)).task as { inputs: unknown }).inputs, {})
  }),
)

test('the task goes over the agent initial_state, which fills the other keys', () => {
  const merged = workerInitialState({ task: 'default', agent_id: 'x', retries: 3 }, { task: { id: T1 }, agent_id: 'swe' })
  assert.equal(merged, { task: { id: T1 }, agent_id: 'swe', retries: 3 })
})

test('the agent run id is fixed per task and AOF run', () => {
  assert.is(workerRunId(T1, '01m80abc'), `aof-${T1}-01m80abc`)
  assert.is.not(workerRunId(T1, 'r1'), workerRunId(T1, 'r2'))
})

test.run()
