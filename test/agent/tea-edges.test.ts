/**
 * Issue 10 item 2: TEA's conditional edges (`when:`, `condition:`), lowered at load time onto the engine's goto
 * routing, with TEA's reading of each form; and the edge mistakes TEA lets pass silently refused at load.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { rejection } from '../support/expect.ts'
import { loadAgentText } from '../../src/agent/load.ts'
import { buildRegistry } from '../../src/features.ts'
import { load, nodesRun, run } from '../engine/harness.ts'

const node = (name: string) => `  - name: ${name}\n    run: "return { path: (state.path || '') + '${name},' }"\n`
const agent = (edges: string, extra = '') => `name: edges
${extra}nodes:
${['classify', 'small', 'big', 'other'].map(node).join('')}edges:
${edges}
  - from: small
    to: __end__
  - from: big
    to: __end__
  - from: other
    to: __end__
`

test('10-2 when: expressions choose the branch, in file order', async () => {
  const yaml = agent(`  - from: classify
    to: small
    when: "state.value < 10"
  - from: classify
    to: big
    when: "state.value >= 10"`)
  assert.is((await run(yaml, { input: { value: 3 } })).state.path, 'classify,small,')
  assert.is((await run(yaml, { input: { value: 30 } })).state.path, 'classify,big,')
})

test("10-2 when: '!flag' and 'flag' read a state key; true/false are constants", async () => {
  const yaml = agent(`  - from: classify
    to: small
    when: "!parsed"
  - from: classify
    to: big
    when: parsed`)
  assert.is((await run(yaml, { input: { parsed: false } })).state.path, 'classify,small,')
  assert.is((await run(yaml, { input: { parsed: true } })).state.path, 'classify,big,')
  const constant = agent(`  - from: classify
    to: small
    when: false
  - from: classify
    to: big
    when: "true"`)
  assert.is((await run(constant)).state.path, 'classify,big,')
})

test("29 yaml_templates.py evaluate_condition: condition: 'flag' and '!flag' name a state key, as when: does", async () => {
  const yaml = agent(`  - from: classify
    to: small
    condition: "!parsed"
  - from: classify
    to: big
    condition: parsed`)
  assert.is((await run(yaml, { input: { parsed: false } })).state.path, 'classify,small,')
  assert.is((await run(yaml, { input: { parsed: true } })).state.path, 'classify,big,')
  const literal = agent(`  - from: classify
    to: small
    condition: "False"
  - from: classify
    to: big
    condition: "True"`)
  assert.is((await run(literal)).state.path, 'classify,big,')
})

test('10-2 condition: {type: expression, value} with when: true/false, and condition: as a template string', async () => {
  const yaml = agent(`  - from: classify
    to: small
    condition: { type: expression, value: "state.score > 5" }
    when: false
  - from: classify
    to: big
    condition: "{{ state.score > 5 }}"`)
  assert.is((await run(yaml, { input: { score: 1 } })).state.path, 'classify,small,')
  assert.is((await run(yaml, { input: { score: 9 } })).state.path, 'classify,big,')
})

test('10-2 an edge without a condition after the conditional ones is the fallback', async () => {
  const yaml = agent(`  - from: classify
    to: small
    when: "state.kind == 'small'"
  - from: classify
    to: other`)
  assert.is((await run(yaml, { input: { kind: 'small' } })).state.path, 'classify,small,')
  assert.is((await run(yaml, { input: { kind: 'huge' } })).state.path, 'classify,other,')
})

test('10-2 a key that is never set makes its condition false, not an error (as in Jinja)', async () => {
  const yaml = agent(`  - from: classify
    to: small
    when: "state.never_set_anywhere == 'yes'"
  - from: classify
    to: big
    when: "state.also_unset"
  - from: classify
    to: other`)
  assert.is((await run(yaml)).state.path, 'classify,other,')
})

test('10-2 when no edge condition holds and there is no fallback, the run fails with NO_ROUTE, told in terms of edges', async () => {
  const yaml = agent(`  - from: classify
    to: small
    when: "state.value < 10"`)
  const ran = await run(yaml, { input: { value: 50 } })
  assert.is(ran.status, 'failed')
  assert.is(ran.error?.code, 'NO_ROUTE')
  assert.is(
    errorMessage(ran.error),
    "node 'classify': none of its conditional edges (when:, condition:) held, and no edge without a condition leaves it",
  )
  assert.match(String(ran.error?.hint), "add an edge from 'classify' without a condition")
  assert.not.ok(nodesRun(ran.events).includes('small'))
})

test('10-2 several edges without a condition from one node are refused at load (only one could be taken)', async () => {
  const e = await rejection(() =>
    load(
      agent(`  - from: classify
    to: small
  - from: classify
    to: big`),
    ),
  )
  assert.match(String(e), "node 'classify' already has an edge without a condition (edges[0])")
})

test('10-2 a plain edge before conditional ones, a goto beside them, a bad condition: each refused at load with its place', async () => {
  const before = await rejection(() =>
    load(
      agent(`  - from: classify
    to: other
  - from: classify
    to: small
    when: "state.x"`),
    ),
  )
  assert.match(String(before), 'before its conditional edges')
  const withGoto = await rejection(() =>
    load(
      agent(`  - from: classify
    to: small
    when: "state.x"`).replace('  - name: classify\n', '  - name: classify\n    goto: big\n'),
    ),
  )
  assert.match(String(withGoto), "node 'classify' has a goto and a conditional edge")
  const bad = await rejection(() =>
    load(
      agent(`  - from: classify
    to: small
    when: "state.x >"`),
    ),
  )
  assert.match(String(bad), 'TEMPLATE_SYNTAX')
  assert.match(String(bad), 'edges[0].when')
  const badType = await rejection(() =>
    load(
      agent(`  - from: classify
    to: small
    condition: { type: python, value: "x" }`),
    ),
  )
  assert.match(String(badType), "unknown condition type 'python'")
})

const TEA_PARALLEL = `name: fanout
nodes:
  - name: start
    run: "return { started: true }"
  - name: b1
    run: "return { one: 1 }"
  - name: b2
    run: "return { two: 2 }"
  - name: join
    fan_in: true
    run: "return { seen: parallel_results_count(state) }"
edges:
  - from: start
    to: b1
    type: parallel
    fan_in: join
    parallel_strategy: thread
  - from: start
    to: b2
    type: parallel
    fan_in: join
  - from: b1
    to: join
  - from: b2
    to: join
  - from: join
    to: __end__
`.replace('parallel_results_count(state)', 'state.parallel_results.length')

test("10-5 TEA's parallel spelling: type: parallel edges per branch, fan_in on the joining node", async () => {
  const ran = await run(TEA_PARALLEL)
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.is(ran.state.seen, 2)
  assert.equal(nodesRun(ran.events).sort(), ['b1', 'b2', 'join', 'start'])
})

test('10-5 parallel edges from one node with different fan_in nodes, or without one, are load errors; remote strategy is a warning', async () => {
  const mixed = await rejection(() =>
    load(TEA_PARALLEL.replace('    type: parallel\n    fan_in: join\n  - from: b1', '    type: parallel\n    fan_in: b1\n  - from: b1')),
  )
  assert.match(String(mixed), "the parallel edges from 'start' name different fan_in nodes")
  const missing = await rejection(() =>
    load(TEA_PARALLEL.replace('    type: parallel\n    fan_in: join\n  - from: b1', '    type: parallel\n  - from: b1')),
  )
  assert.match(String(missing), 'a type: parallel edge needs fan_in')
  const remote = loadAgentText(
    TEA_PARALLEL.replace('parallel_strategy: thread', 'parallel_strategy: remote'),
    '/tmp/r.yaml',
    buildRegistry(),
  )
  assert.equal(remote.problems, [])
  assert.equal(
    remote.warnings.map((w) => w.message),
    [
      "'parallel_strategy: remote' (branches on other hosts over SSH) is a TEA feature that tea does not provide: tea runs the branches concurrently in this process",
    ],
  )
})

test.run()
