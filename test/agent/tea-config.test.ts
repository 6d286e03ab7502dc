/** Issue 10 item 4: TEA's `config` keys and an optional top-level `name`. */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadAgentFile } from '../../src/agent/load.ts'
import { load, nodesRun, run, testRegistry } from '../engine/harness.ts'
import { tempDir } from '../support/temp-dir.ts'

const slow = (ms: number) => `"await new Promise((r) => setTimeout(r, ${ms})); return { n: (state.n || 0) + 1 }"`

test('10-4 raise_exceptions and checkpoint_dir are accepted (tea always stops a run on a node error and checkpoints into its store)', () => {
  const spec = load(
    'name: c\nconfig:\n  raise_exceptions: true\n  checkpoint_dir: ./checkpoints\nnodes:\n  - name: a\n    run: "return {}"\n',
  )
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
  const resumed = await run(yaml.replace('max_execution_time: 150', 'max_execution_time: 5000'), {
    runId: 't',
    resume: true,
    store: ran.store,
  })
  assert.is(resumed.status, 'completed', JSON.stringify(resumed.error))
  assert.not.ok(nodesRun(resumed.events).includes('a'), 'recorded nodes do not run again')
})

test('10-4 name is optional: the file name stands in', () => {
  const spec = load('nodes:\n  - name: a\n    run: "return {}"\n')
  assert.is(spec.name, 'agent')
})

test("10-4 TEA's next: routes like goto (condition for if)", async () => {
  const yaml = `name: n
nodes:
  - name: pick
    run: "return { mode: state.mode }"
    next:
      - condition: "{{ state.mode == 'a' }}"
        to: a
      - to: b
  - name: a
    run: "return { went: 'a' }"
    next: __end__
  - name: b
    run: "return { went: 'b' }"
`
  assert.is((await run(yaml, { input: { mode: 'a' } })).state.went, 'a')
  assert.is((await run(yaml, { input: { mode: 'z' } })).state.went, 'b')
})

test('10-9 settings.llm.default_model and default_provider stand in for model and provider', () => {
  const spec = load(
    'name: d\nsettings:\n  llm:\n    default_model: gemma3:4b\n    default_provider: ollama\nnodes:\n  - name: a\n    run: "return {}"\n',
  )
  assert.equal([spec.settings.llm.model, spec.settings.llm.provider], ['gemma3:4b', 'ollama'])
})

test('10-9 auto_trace with trace_exporter: file writes every run event to trace_file as NDJSON', async () => {
  const dir = tempDir('tea-trace-')
  try {
    const file = join(dir, 'agent.yaml')
    writeFileSync(
      file,
      'name: traced\nsettings:\n  auto_trace: true\n  trace_exporter: file\n  trace_file: out/../trace.jsonl\nnodes:\n  - name: a\n    run: "return { x: 1 }"\n',
    )
    const { spec, problems } = loadAgentFile(file, testRegistry())
    assert.equal(problems, [])
    assert.is(spec?.traceFile, join(dir, 'trace.jsonl'))
    const ran = await run(spec!)
    assert.is(ran.status, 'completed')
    const lines = readFileSync(join(dir, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    assert.equal(
      lines.map((e) => e.type),
      ran.events.map((e) => e.type),
    )
    assert.ok(lines.every((e) => typeof e.ts === 'number'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
