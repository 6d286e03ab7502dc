/**
 * Deterministic output through the real CLI (the built bundle), issue 9 point 7: `tea run` SIGKILLed in the middle
 * of a plan and then `tea resume`d prints the same final state as an uninterrupted run, byte for byte — keys in the
 * same order, not merely the same values.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { killWhen, scratch, tea } from '../e2e/cli.ts'

// The plan carries what a resume rebuilds from its records: a rationale, a parent, a per-subtask timeout, a key of
// its own, and subtasks that change state.
const agent = (parallel: boolean) => `name: resume-output
initial_state:
  plan:
    id: plan_output
    goal: count
    strategy: hierarchical
    created_at: 1
    replan_count: 0
    max_replans: 0
    rationale: three steps
    owner: me
    subtasks:
      - { id: "1", description: "step 1", dependencies: [], parent: "p" }
      - { id: "2", description: "step 2", dependencies: [], timeout: 30 }
      - { id: "3", description: "step 3", dependencies: ["1"] }
      - { id: "4", description: "step 4", dependencies: ["2", "3"] }
nodes:
  - name: work
    uses: plan.execute
    with:
      plan: "{{ state.plan }}"
      parallel: ${parallel}
      max_concurrent: 2
      subtask_executor:
        run: "await new Promise((r) => setTimeout(r, 80)); state['k' + subtask.id] = { id: subtask.id }; return { done: subtask.id }"
`

/** SIGKILLs the run once subtask `id` has completed (its record committed). */
async function killAfter(args: string[], id: string): Promise<void> {
  const r = await killWhen(args, (e) => e.type === 'subtask' && e.id === id && e.status === 'completed')
  assert.is(r.signal, 'SIGKILL', `the run should have been killed after subtask ${id}: ${r.stderr}`)
}

for (const parallel of [false, true]) {
  test(`a ${parallel ? 'parallel' : 'sequential'} plan killed after a subtask and resumed prints exactly what an uninterrupted run prints`, async () => {
    const ref = scratch({ 'agent.yaml': agent(parallel) })
    const s = scratch({ 'agent.yaml': agent(parallel) })
    try {
      const reference = await tea(['run', ref.path('agent.yaml'), '--data-dir', ref.path('data'), '-q'])
      assert.is(reference.code, 0, reference.stderr)
      assert.match(reference.stdout, '"success": true')
      await killAfter(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'crash'], '2')
      const resumed = await tea(['resume', 'crash', '--data-dir', s.path('data'), '-q'])
      assert.is(resumed.code, 0, resumed.stderr)
      assert.is(resumed.stdout, reference.stdout)
    } finally {
      ref.cleanup()
      s.cleanup()
    }
  })
}

test.run()
