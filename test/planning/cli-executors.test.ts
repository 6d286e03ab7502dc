/**
 * Subtask executors through the real CLI (the built bundle): a templated `with:` reaches plan.execute unrendered
 * and is rendered per subtask; `run:` executors run in the environment of a `run:` node (console to stderr as log
 * lines, `ctx`, no `process`, a loop guard that stops a busy loop without losing the worker); a plan error names
 * its node once. Skipped, with a message, until the bundle registers the plan.* actions.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from '../e2e/cli.ts'

async function wired(): Promise<boolean> {
  const r = await tea(['actions', '--json'])
  return r.code === 0 && r.stdout.includes('"plan.execute"')
}

const TEMPLATED = `name: templated
initial_state:
  prefix: job
  plan:
    id: plan_t
    goal: label the jobs
    subtasks:
      - { id: a, description: first }
      - { id: b, description: second, dependencies: [a] }
nodes:
  - name: work
    uses: plan.execute
    with:
      subtask_executor:
        action: json.transform
        with:
          data: { id: "{{ state.prefix }}-{{ subtask.id }}", after: "{{ dependency_results }}" }
          mapping: { id: "{{ data.id }}", upper: "data.id | upper", after: "data.after" }
`

test('001.3R-INT-009 (CLI) a templated with: in subtask_executor is rendered per subtask, the action rendering its own raw params', async () => {
  assert.ok(await wired(), 'the full bundle must list plan.* actions (src/features.ts registers them)')
  const s = scratch({ 'agent.yaml': TEMPLATED })
  try {
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(r.code, 0, r.stderr)
    const state = JSON.parse(r.stdout)
    assert.is(state.success, true, JSON.stringify(state.plan_error))
    const a = { result: { id: 'job-a', upper: 'JOB-A', after: {} } }
    assert.equal(state.subtask_results, { a, b: { result: { id: 'job-b', upper: 'JOB-B', after: { a } } } })
  } finally {
    s.cleanup()
  }
})

const CODE_ENV = `name: code-env
variables: { unit: g }
initial_state:
  plan:
    goal: look around
    subtasks:
      - { id: first, description: first }
      - { id: spin, description: spin forever, timeout: 0.5 }
      - { id: after, description: after }
nodes:
  - name: work
    uses: plan.execute
    with:
      parallel: false
      on_subtask_failure: skip
      subtask_executor:
        run: |
          console.log('hello from', subtask.id)
          // one vm context per worker: the same marker means the same worker
          globalThis.marker ??= Math.random()
          if (subtask.id === 'spin') for (;;) {}
          return { marker: globalThis.marker, node: ctx.node, run: ctx.runId, unit: variables.unit, process: typeof process, fetch: typeof fetch }
`

test('run: executors log to stderr, never stdout; see ctx but not process; a busy loop stops at its timeout and the worker carries on', async () => {
  assert.ok(await wired(), 'the full bundle must list plan.* actions (src/features.ts registers them)')
  const s = scratch({ 'agent.yaml': CODE_ENV })
  try {
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'env'])
    assert.is(r.code, 0, r.stderr)
    const state = JSON.parse(r.stdout) // the whole of stdout is the final state
    assert.not.match(r.stdout, 'hello from')
    assert.match(r.stderr, '[work] subtask first: hello from first')
    assert.match(r.stderr, '[work] subtask after: hello from after')
    const first = state.subtask_results.first
    assert.equal({ ...first, marker: 0 }, { marker: 0, node: 'work', run: 'env', unit: 'g', process: 'undefined', fetch: 'undefined' })
    assert.is(state.subtask_results.after.marker, first.marker, 'the subtask after the busy loop ran in the same worker')
    const spin = state.plan.subtasks.find((t: { id: string }) => t.id === 'spin')
    assert.is(spin.status, 'skipped')
    assert.match(spin.error, 'subtask spin: ran over its timeout of 0.5 s')
  } finally {
    s.cleanup()
  }
})

const CYCLE = `name: cycle
initial_state:
  plan:
    subtasks:
      - { id: A, description: a, dependencies: [B] }
      - { id: B, description: b, dependencies: [A] }
nodes:
  - name: work
    uses: plan.execute
    with: { subtask_executor: { run: "return 1" } }
`

test('001.3R-UNIT-004 (CLI) a plan error names its node and action once', async () => {
  assert.ok(await wired(), 'the full bundle must list plan.* actions (src/features.ts registers them)')
  const s = scratch({ 'agent.yaml': CYCLE })
  try {
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'cyc'])
    assert.is(r.code, 1, r.stderr)
    const line = r.stderr.split('\n').find((l) => l.includes('[PLAN_CYCLE]'))
    assert.ok(line, r.stderr)
    assert.match(line, "[PLAN_CYCLE] node 'work' (plan.execute): invalid plan:")
    assert.is(line.split('plan.execute').length - 1, 1, line)
    assert.match(r.stderr, 'dependency cycle: A → B → A')
  } finally {
    s.cleanup()
  }
})

test.run()
