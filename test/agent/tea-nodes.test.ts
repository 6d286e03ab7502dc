/**
 * Issue 10 item 6: TEA's `type: dynamic_parallel` (action: or steps:) and `steps:` nodes, lowered onto flow.map and
 * flow.steps; items are checkpointed one by one, so a resumed run does not redo finished items.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { calls, nodesRun, run } from '../engine/harness.ts'

const DP_ACTION = `name: dp
nodes:
  - name: prepare
    run: "return { files: ['a', 'b', 'c'] }"
  - name: fan_out
    type: dynamic_parallel
    items: "{{ state.files }}"
    item_var: f
    max_concurrency: 2
    fan_in: collect
    action:
      uses: test.echo
      with: { name: "{{ f }}", at: "{{ index }}", prefix: "{{ state.files | length }}" }
  - name: collect
    fan_in: true
    run: "return { names: state.parallel_results.map((r) => r.state.name + r.state.at) }"
`

test("10-6 dynamic_parallel with action: runs it per item, results in item order as TEA's ParallelFlowResult, then goes to fan_in", async () => {
  const ran = await run(DP_ACTION)
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.equal(ran.state.names, ['a0', 'b1', 'c2'])
  assert.equal(nodesRun(ran.events), ['prepare', 'fan_out', 'collect'])
  const first = (ran.state.parallel_results as Array<Record<string, unknown>>)[0]!
  assert.equal(
    { ...first, timing_ms: typeof first.timing_ms },
    {
      branch: 'fan_out[0]',
      index: 0,
      success: true,
      state: { name: 'a', at: 0, prefix: 3, f: 'a', index: 0 },
      error: null,
      timing_ms: 'number',
    },
  )
})

test("10-6 dynamic_parallel action: output: puts the action's result under that key of the branch's state (TEA)", async () => {
  const ran = await run(
    DP_ACTION.replace('prefix: "{{ state.files | length }}" }', 'prefix: "x" }\n      output: echoed').replace(
      'r.state.name + r.state.at',
      'r.state.echoed.name + r.state.f',
    ),
  )
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.equal(ran.state.names, ['aa', 'bb', 'cc'])
})

test('10-6 dynamic_parallel with steps: each item runs the steps on a copy of the state; steps: nodes run in order', async () => {
  const ran = await run(`name: dps
nodes:
  - name: fan
    type: dynamic_parallel
    items: [1, 2, 3]
    output: doubled
    steps:
      - name: double
        run: "return { d: item * 2 }"
      - name: label
        uses: test.echo
        with: { label: "n{{ state.d }}" }
  - name: seq
    steps:
      - run: "return { a: 1 }"
      - uses: test.echo
        with: { b: "{{ state.a + 1 }}" }
        output: { b: "{{ result.b }}" }
`)
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.equal(
    (ran.state.doubled as Array<{ state: unknown }>).map((r) => r.state),
    [
      { d: 2, label: 'n2', item: 1, index: 0 },
      { d: 4, label: 'n4', item: 2, index: 1 },
      { d: 6, label: 'n6', item: 3, index: 2 },
    ],
  )
  assert.equal([ran.state.a, ran.state.b], [1, 2])
})

test("10-6 fail_fast: false (TEA's default) records a failed item as success: false and goes on; fail_fast: true stops the node", async () => {
  const yaml = (failFast: string) => `name: ff
nodes:
  - name: fan
    type: dynamic_parallel
    items: [1, 0, 2]
    ${failFast}
    steps:
      - run: "if (item === 0) throw new Error('zero'); return { inv: 1 / item }"
`
  const kept = await run(yaml(''))
  assert.is(kept.status, 'completed')
  const results = kept.state.parallel_results as Array<Record<string, unknown>>
  assert.equal([results[0]!.success, results[0]!.state], [true, { inv: 1, item: 1, index: 0 }])
  assert.equal(
    [results[1]!.success, results[1]!.state, results[1]!.error_type, results[1]!.branch],
    [false, { item: 0, index: 1 }, 'CODE_ERROR', 'fan[1]'],
  )
  assert.match(String(results[1]!.error), 'zero')
  const stopped = await run(yaml('fail_fast: true'))
  assert.is(stopped.status, 'failed')
  assert.is(stopped.error?.code, 'CODE_ERROR')
})

test('10-6 a run stopped mid-map resumes without redoing the items that had finished', async () => {
  const store = createMemoryStore()
  const yaml = `name: resumable
nodes:
  - name: fan
    type: dynamic_parallel
    items: [1, 2, 3, 4]
    max_concurrency: 1
    fail_fast: true
    action:
      uses: test.flaky
      with: { key: "item{{ item }}", succeed_after: "{{ 0 if item != 3 else 1 }}" }
  - name: done
    run: "return { n: state.parallel_results.length }"
`
  for (const k of Object.keys(calls)) delete calls[k]
  const first = await run(yaml, { store, runId: 'm' })
  assert.is(first.status, 'failed', 'item 3 fails the first time')
  assert.equal([calls.item1, calls.item2, calls.item3, calls.item4], [1, 1, 1, undefined])
  const resumed = await run(yaml, { store, runId: 'm', resume: true })
  assert.is(resumed.status, 'completed', JSON.stringify(resumed.error))
  assert.is(resumed.state.n, 4)
  assert.equal([calls.item1, calls.item2, calls.item3, calls.item4], [1, 1, 2, 1], 'items 1 and 2 were not run again')
  assert.equal(await store.memoryList('flow.map:m:fan'), [], 'the item records are removed once the node is done')
})

test('10-6 while_loop: body runs while the condition holds, at most max_iterations; a missing key is false', async () => {
  const yaml = (max: number) => `name: loop
nodes:
  - name: count
    type: while_loop
    condition: "state.n is not defined or state.n < 3"
    max_iterations: ${max}
    body:
      - run: "return { n: (state.n || 0) + 1 }"
      - uses: test.echo
        with: { last: "{{ state.n }}" }
  - name: after
    run: "return { done: state.n }"
`
  const ran = await run(yaml(10))
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.equal([ran.state.n, ran.state.last, ran.state.done, ran.state.loop_iterations, ran.state.loop_exit], [3, 3, 3, 3, 'condition'])
  const bounded = await run(yaml(2))
  assert.equal([bounded.state.n, bounded.state.loop_exit], [2, 'max_iterations'])
})

test('10-6 what is not lowered is named: dynamic_parallel with subgraph: loads, and its run fails there naming it', async () => {
  const ran = await run('name: s\nnodes:\n  - name: f\n    type: dynamic_parallel\n    items: [1]\n    subgraph: ./other.yaml\n')
  assert.is(ran.status, 'failed')
  assert.is(ran.error?.code, 'TEA_UNSUPPORTED')
  assert.match(String(ran.error?.message), "'nodes.0.type: dynamic_parallel' is a TEA feature that tea does not provide yet")
  assert.not.match(String(ran.error?.message), "needs 'uses:'")
})

test.run()
