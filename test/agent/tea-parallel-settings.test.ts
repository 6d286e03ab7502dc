/**
 * Issue 29: TEA's `settings.parallel` (yaml_engine.py: strategy thread, process or remote, and max_workers). thread
 * and process run a fan-out as tea runs it; remote, branches on other hosts over SSH, is refused; TEA's
 * `settings.prolog`, which no TEA runtime reads, is set aside with a warning.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { run, testRegistry } from '../engine/harness.ts'

const fanOut = (settings: string) => `name: par
settings:
${settings}
nodes:
  - name: start
    run: "return { n: 3 }"
  - name: b1
    run: "return { v: state.n * 2 }"
  - name: b2
    run: "return { v: state.n * 3 }"
  - name: join
    run: "return { sum: state.parallel_results.reduce((a, r) => a + r.v, 0) }"
edges:
  - from: __start__
    to: start
  - from: start
    to: [b1, b2]
    fan_in: join
  - from: b1
    to: join
  - from: b2
    to: join
  - from: join
    to: __end__
`

const load = (yaml: string) => loadAgentText(yaml, '/tmp/par.yaml', testRegistry())

test('29 settings.parallel thread and process load without a word and run the branches', async () => {
  for (const strategy of ['thread', 'process']) {
    const yaml = fanOut(`  parallel:\n    strategy: ${strategy}\n    max_workers: 2`)
    const loaded = load(yaml)
    assert.equal([loaded.problems, loaded.warnings], [[], []], strategy)
    const ran = await run(yaml)
    assert.is(ran.status, 'completed', JSON.stringify(ran.error))
    assert.is(ran.state.sum, 15, strategy)
  }
})

test('29 settings.parallel remote is refused, saying why; its hosts block is named as a TEA feature', () => {
  const loaded = load(fanOut('  parallel:\n    strategy: remote\n    remote:\n      hosts: [gpu1]'))
  assert.equal(
    loaded.problems.map((p) => [p.code, p.message]),
    [
      [
        'AGENT_INVALID',
        "settings.parallel.strategy: must be 'thread' or 'process' (tea runs the branches concurrently in this process); 'remote' runs them on other hosts over SSH, which tea does not provide",
      ],
    ],
  )
  assert.equal(
    loaded.warnings.map((w) => w.code),
    ['TEA_UNSUPPORTED'],
  )
  assert.match(loaded.warnings[0]!.message, "'settings.parallel.remote' is a TEA feature that tea does not provide")
})

test("29 a strategy that is not one of TEA's, or a max_workers below 1, is a load error", () => {
  assert.is(load(fanOut('  parallel:\n    strategy: fork')).problems[0]?.code, 'AGENT_INVALID')
  assert.match(load(fanOut('  parallel:\n    max_workers: 0')).problems[0]?.message ?? '', 'must be ≥ 1')
})

test('29 settings.prolog, which no TEA runtime reads, is set aside with a warning', () => {
  const loaded = load(fanOut('  prolog:\n    preload_file: rules.pl'))
  assert.equal(loaded.problems, [])
  assert.equal(
    loaded.warnings.map((w) => w.code),
    ['TEA_UNSUPPORTED'],
  )
  assert.match(loaded.warnings[0]!.message, "'settings.prolog' is not read by TEA's runtime either")
})

test.run()
