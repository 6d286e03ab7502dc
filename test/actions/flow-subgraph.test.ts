/**
 * Issue 29: TEA's `dynamic_parallel` with `subgraph:` (yaml_nodes.py): a sub-agent file, beside the agent, run once
 * per item from the node's `input:` mapping; each branch's state is the sub-agent's final state. tea gives the
 * sub-agent's nodes to flow.map as each item's steps; what steps cannot be, and a path out of the agent's folder,
 * stay a TEA feature tea names.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { run, testRegistry } from '../engine/harness.ts'
import { tempDir } from '../support/temp-dir.ts'

const root = tempDir('tea-subgraph-')
const dir = join(root, 'agent')
mkdirSync(dir)

const SUB = `name: per-item
nodes:
  - name: first
    run: "return { doubled: state.n * 2, saw_secret: state.secret === undefined ? 'no' : 'yes' }"
  - name: second
    run: "return { label: state.name + ':' + state.doubled }"
`
writeFileSync(join(dir, 'sub.yaml'), SUB)

const parent = (subgraph: string) => `name: batch
nodes:
  - name: setup
    run: "return { secret: 's3', sources: [{ name: 'a', n: 1 }, { name: 'b', n: 5 }] }"
  - name: fan
    type: dynamic_parallel
    items: "{{ state.sources }}"
    item_var: source
    index_var: i
    max_concurrency: 2
    subgraph: ${JSON.stringify(subgraph)}
    input:
      name: "{{ source.name }}"
      n: "{{ source.n }}"
    output: results
    fan_in: join
  - name: join
    run: "return { labels: state.results.map((r) => r.state.label), ok: state.results.every((r) => r.success) }"
`

const load = (yaml: string) => loadAgentText(yaml, join(dir, 'parent.yaml'), testRegistry())

test("29 subgraph: each item runs the sub-agent from its input mapping; each branch's state is the sub-agent's final state", async () => {
  const loaded = load(parent('./sub.yaml'))
  assert.equal([loaded.problems, loaded.warnings], [[], []])
  const ran = await run(loaded.spec!)
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.equal(ran.state.labels, ['a:2', 'b:10'])
  assert.is(ran.state.ok, true)
  const results = ran.state.results as Array<{ state: Record<string, unknown>; branch: string }>
  // TEA's sub-agent starts from input alone: the parent's state (secret) is not in it.
  assert.equal(results[0]!.state, { name: 'a', n: 1, doubled: 2, saw_secret: 'no', label: 'a:2' })
  assert.is(results[1]!.branch, 'fan[1]')
})

test("29 subgraph: the sub-agent's bodies get their languages among themselves, printed under the node", () => {
  const loaded = load(parent('sub.yaml'))
  assert.equal(
    (loaded.spec!.runLanguages ?? []).map((c) => c.key),
    ['setup', 'fan.subgraph.first', 'fan.subgraph.second', 'join'],
  )
})

test("29 subgraph: a resumed run keeps the languages its sub-agent's bodies started with", () => {
  const { spec, problems } = loadAgentText(parent('sub.yaml'), join(dir, 'parent.yaml'), testRegistry(), {
    runLanguages: { 'fan.subgraph.first': 'python' },
  })
  assert.equal(problems, [])
  const chosen = Object.fromEntries((spec!.runLanguages ?? []).map((c) => [c.key, [c.language, c.reason]]))
  assert.equal(chosen['fan.subgraph.first'], ['python', 'recorded'])
  assert.equal(chosen['fan.subgraph.second'], ['javascript', 'default'])
})

test("29 subgraph: a path out of the agent's folder, a URL or a missing file is not read, and the node is named a TEA feature", () => {
  writeFileSync(join(root, 'outside.yaml'), SUB)
  symlinkSync(join(root, 'outside.yaml'), join(dir, 'link.yaml'))
  spawnSync('mkfifo', [join(dir, 'fifo.yaml')])
  for (const path of [
    '../outside.yaml',
    join(root, 'outside.yaml'),
    'https://example.com/sub.yaml',
    './link.yaml',
    './missing.yaml',
    './fifo.yaml',
  ]) {
    const loaded = load(parent(path))
    assert.equal(loaded.problems, [], path)
    assert.equal(
      loaded.warnings.map((w) => w.code),
      ['TEA_UNSUPPORTED'],
      path,
    )
    assert.ok(!(loaded.spec!.runLanguages ?? []).some((c) => c.key.startsWith('fan.subgraph.')), path)
  }
})

test('29 subgraph: a sub-agent that routes (a conditional edge) is not steps, and stays a TEA feature', () => {
  writeFileSync(
    join(dir, 'routes.yaml'),
    `${SUB}edges:\n  - from: __start__\n    to: first\n  - from: first\n    to: second\n    when: "state.n > 1"\n  - from: second\n    to: __end__\n`,
  )
  assert.equal(
    load(parent('routes.yaml')).warnings.map((w) => w.code),
    ['TEA_UNSUPPORTED'],
  )
  writeFileSync(
    join(dir, 'chain.yaml'),
    `${SUB}edges:\n  - from: __start__\n    to: second\n  - from: second\n    to: first\n  - from: first\n    to: __end__\n`,
  )
  const chained = load(parent('chain.yaml'))
  assert.equal(chained.warnings, [])
  assert.equal(
    (chained.spec!.runLanguages ?? []).map((c) => c.key).slice(1, 3),
    ['fan.subgraph.second', 'fan.subgraph.first'],
    'an unconditional chain of edges sets the order',
  )
})

test.after(() => rmSync(root, { recursive: true, force: true }))

test.run()
