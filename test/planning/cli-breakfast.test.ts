/**
 * 001.3R-E2E-001 through the real CLI: `tea run examples/plan-breakfast/agent.yaml --replay …` from the built
 * bundle, offline. Skipped, with a message, until the bundle registers the plan.* actions.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from '../e2e/cli.ts'

test('001.3R-E2E-001 breakfast from the CLI: toast before coffee, eggs alongside toast, all results, 3/3 completed', async () => {
  const listed = await tea(['actions', '--json'])
  assert.match(listed.stdout, '"plan.execute"', `the full bundle must list plan.* actions: ${listed.stderr}`)
  const s = scratch()
  try {
    const args = [
      'run',
      'examples/plan-breakfast/agent.yaml',
      '--replay',
      'examples/plan-breakfast/cassette.jsonl',
      '--data-dir',
      s.path('data'),
    ]
    const streamed = await tea([...args, '--stream'])
    assert.is(streamed.code, 0, streamed.stderr)
    const events = streamed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; id?: string; status?: string; state?: Record<string, any> })
    const sub = events.filter((e) => e.type === 'subtask')
    const at = (id: string, status: string) => sub.findIndex((e) => e.id === id && e.status === status)
    assert.ok(at('toast', 'completed') < at('coffee', 'in_progress'), 'coffee starts after the toast is done')
    assert.ok(at('eggs', 'in_progress') < at('toast', 'completed'), 'the eggs start while the toast is cooking')
    const state = events.at(-1)!.state!
    assert.is(events.at(-1)!.type, 'complete')
    assert.equal(Object.keys(state.subtask_results), ['toast', 'eggs', 'coffee'])
    assert.equal([state.plan_progress.completed, state.plan_progress.total], [3, 3])
    assert.is(state.plan_status.completed, 3)
    assert.match(state.plan_status.mermaid, 'flowchart TD')

    const plain = await tea([...args])
    assert.is(plain.code, 0, plain.stderr)
    assert.equal(Object.keys(JSON.parse(plain.stdout).subtask_results), ['toast', 'eggs', 'coffee'])
    assert.match(plain.stderr, 'subtask coffee')
  } finally {
    s.cleanup()
  }
})

test.run()
