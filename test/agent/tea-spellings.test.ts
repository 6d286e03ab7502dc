/**
 * Issue 29: TEA's other spellings (src/agent/tea-spellings.ts), as the loader reads them: output_key (yaml_nodes.py),
 * an edge's parallel: true (navigation.md), and plan.replan's context, which TEA's action never reads
 * (planning_actions.py; planning/code-refactoring-plan.yaml).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { buildRegistry } from '../../src/features.ts'

const load = (yaml: string) => loadAgentText(yaml, '/tmp/tea.yaml', buildRegistry())

test('yaml_nodes.py: output_key on an action node is output; on a run: node it is left to the loader', () => {
  const { spec, problems } = load('name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: "{}" }\n    output_key: parsed\n')
  assert.equal(problems, [])
  assert.is(spec!.nodes[0]!.output, 'parsed')
})

test('navigation.md: edges with parallel: true and one fan_in are one parallel fan-out', () => {
  const yaml = `name: x
nodes:
  - { name: prep, run: "return {}" }
  - { name: l, run: "return {}", goto: join }
  - { name: r, run: "return {}", goto: join }
  - { name: join, run: "return {}" }
edges:
  - { from: prep, to: l, parallel: true, fan_in: join }
  - { from: prep, to: r, parallel: true, fan_in: join }
`
  const { spec, problems } = load(yaml)
  assert.equal(problems, [])
  assert.equal(spec!.parallel.get('prep'), { from: 'prep', to: ['l', 'r'], fanIn: 'join' })
})

test("code-refactoring-plan.yaml: plan.replan's context and preserve_completed are set aside with a warning, not refused", () => {
  const yaml = `name: x
nodes:
  - name: replan
    uses: plan.replan
    with:
      plan: "{{ state.plan }}"
      context: "A step failed"
      preserve_completed: true
`
  const { spec, problems, warnings } = load(yaml)
  assert.equal(problems, [])
  assert.equal(
    warnings.map((w) => `${w.where.line}:${w.where.col} ${w.code} ${w.message}`),
    [
      "7:7 TEA_UNSUPPORTED 'nodes.0.with.context' is not read by TEA's plan.replan either (it is not in its prompt; TEA passes it on to the model client); tea sets it aside",
      "8:7 TEA_UNSUPPORTED 'nodes.0.with.preserve_completed' is not read by TEA's plan.replan either (it is not in its prompt; TEA passes it on to the model client); tea sets it aside",
    ],
  )
  assert.equal(Object.keys(spec!.nodes[0]!.with!), ['plan'])
})

test('another action keeps refusing an unknown parameter', () => {
  const { problems } = load('name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: "{}", context: 1 }\n')
  assert.ok(
    problems.some((p) => p.code === 'INVALID_PARAMS' && p.message.includes("'context'")),
    JSON.stringify(problems),
  )
})

test('multi-agent/sequential-pipeline.yaml: params: is set aside (no TEA runtime reads it); the file loads and the node fails when it runs, as in TEA', () => {
  const yaml = 'name: x\nnodes:\n  - name: a\n    uses: json.parse\n    params: { text: "{}" }\n'
  const { spec, problems, warnings } = load(yaml)
  assert.equal(problems, [])
  assert.ok(warnings.some((w) => w.message.includes("'nodes.0.params' is not read by TEA's runtime either")))
  assert.ok(warnings.some((w) => w.code === 'INVALID_PARAMS' && w.message.includes('write them under with:')))
  assert.is(
    spec!.nodes[0]!.unsupported!,
    `'nodes.0.params' is a TEA feature that no TEA runtime reads, so the action gets no parameters (with.text: Invalid key: Expected "text" but received undefined): write them under with:`,
  )
})

test.run()
