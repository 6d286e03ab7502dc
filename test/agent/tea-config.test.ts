/** Issue 10 item 4: TEA's `config` keys and an optional top-level `name`. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { load, nodesRun, run } from '../engine/harness.ts'

const slow = (ms: number) => `"await new Promise((r) => setTimeout(r, ${ms})); return { n: (state.n || 0) + 1 }"`

test('10-4 raise_exceptions and checkpoint_dir are accepted (tea always stops a run on a node error and checkpoints into its store)', () => {
  const spec = load('name: c\nconfig:\n  raise_exceptions: true\n  checkpoint_dir: ./checkpoints\nnodes:\n  - name: a\n    run: "return {}"\n')
  assert.is(spec.name, 'c')
})

test('10-4 max_execution_time (ms) bounds the run: past it the run fails with RUN_TIMEOUT, recorded, and can be resumed', async () => {
  const yaml = `name: timed
config:
  max_execution_time: 150
nodes:
  - name: a
    run: ${slow(10)}
  - name: b
    run: ${slow(300)}
  - name: c
    run: ${slow(10)}
`
  const ran = await run(yaml, { runId: 't' })
  assert.is(ran.status, 'failed')
  assert.is(ran.error?.code, 'RUN_TIMEOUT')
  assert.match(ran.error?.message ?? '', 'time limit of 0.15 s (config.max_execution_time)')
  assert.match(ran.error?.hint ?? '', 'tea resume t')
  assert.is((await ran.store.getRun('t'))?.status, 'failed')
  assert.ok(nodesRun(ran.events).includes('a'))
  const resumed = await run(yaml.replace('max_execution_time: 150', 'max_execution_time: 5000'), { runId: 't', resume: true, store: ran.store })
  assert.is(resumed.status, 'completed', JSON.stringify(resumed.error))
  assert.not.ok(nodesRun(resumed.events).includes('a'), 'recorded nodes do not run again')
})

test('10-4 name is optional: the file name stands in', () => {
  const spec = load('nodes:\n  - name: a\n    run: "return {}"\n')
  assert.is(spec.name, 'agent')
})

test.run()
