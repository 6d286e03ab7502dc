import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { createLlmClient } from '../../src/llm/client.ts'
import { decompose, decomposeParams } from '../../src/planning/decompose.ts'
import { execute } from '../../src/planning/execute.ts'
import { executeParams } from '../../src/planning/execute-params.ts'
import { planStatus } from '../../src/planning/status.ts'
import type { Plan } from '../../src/planning/types.ts'
import { GOAL, MODEL, cassetteLines } from '../../examples/plan-breakfast/make-cassette.ts'
import { planningContext } from './helpers.ts'

const cassette = new URL('../../examples/plan-breakfast/cassette.jsonl', import.meta.url)

test('the plan-breakfast cassette matches the prompts the planning actions send today', () => {
  const onDisk = readFileSync(cassette, 'utf8').trim().split('\n')
  assert.equal(onDisk, cassetteLines(), 'stale cassette: run npx tsx examples/plan-breakfast/make-cassette.ts')
})

test('001.3R-E2E-001 (replayed) the breakfast example plans, cooks and reports offline from its cassette', async () => {
  const llm = createLlmClient({ env: {}, replay: cassette.pathname })
  const ctx = planningContext(llm, { settings: { llm: { model: MODEL, temperature: 0 } } })
  try {
    const made = await decompose(v.parse(decomposeParams, { goal: GOAL, strategy: 'flat', max_subtasks: 5 }), ctx)
    const out = await execute(
      v.parse(executeParams, { plan: made.plan, max_concurrent: 2, on_subtask_failure: 'retry', max_retries: 1 }),
      ctx,
    )
    const plan = out.plan as Plan
    assert.equal(Object.keys(out.subtask_results as object), ['toast', 'eggs', 'coffee'])
    assert.match((out.subtask_results as Record<string, string>).coffee!, 'coffee')
    const status = planStatus(plan, { include_completed: true, include_details: false, format: 'mermaid' })
    assert.equal([status.completed, status.total], [3, 3])
    assert.match(status.mermaid!, 't0 --> t2')
    const started = ctx.events.filter((e) => e.type === 'subtask' && e.status === 'in_progress').map((e) => (e as { id: string }).id)
    assert.equal(started.slice(0, 2).sort(), ['eggs', 'toast'])
  } finally {
    ctx.cleanup()
  }
})

test.run()
