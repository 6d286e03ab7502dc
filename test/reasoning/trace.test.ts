/**
 * The reasoning trace (../shared/specs/reasoning-test-design.md AC6, 001.4R-SEC-002): the ReasoningTrace every
 * reasoning action returns, NDJSON export streamed to a file inside the workspace, and the events on the run's
 * stream.
 */

import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rejects } from '../support/expect.ts'
import { createRegistry } from '../../src/actions/registry.ts'
import { RunContext } from '../../src/actions/context.ts'
import { fileActions } from '../../src/actions/file/index.ts'
import type { RunEvent } from '../../src/core/events.ts'
import { toNdjson, Tracer, withoutNul } from '../../src/reasoning/trace.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { testContext } from '../actions/context.ts'
import { benchSuite } from './harness.ts'

/** A context whose invoke reaches the real file actions (the trace file is written through file.write). */
function fileContext() {
  const base = testContext()
  const events: RunEvent[] = []
  const ctx = new RunContext(
    {
      runId: 'r',
      variables: {},
      settings: base.settings,
      llm: base.llm,
      store: createMemoryStore(),
      emit: (e) => void events.push(e),
      registry: createRegistry(fileActions),
    },
    'think',
    {},
    new AbortController().signal,
  )
  return { ctx, events, workspace: base.workspace, cleanup: () => base.cleanup() }
}

test('001.4R-UNIT-024 a trace has its action, node, span, times and every entry', async () => {
  const { ctx, cleanup } = fileContext()
  const tracer = new Tracer(ctx, 'reason.react')
  for (let i = 1; i <= 3; i++) tracer.add('react_step', { thought: `t${i}` })
  const trace = await tracer.finish()
  assert.is(trace.action_type, 'reason.react')
  assert.is(trace.node, 'think')
  assert.match(trace.span_id, /^[0-9a-f-]{36}$/)
  assert.ok(trace.end_time! >= trace.start_time)
  assert.ok(trace.duration_ms! >= 0)
  assert.equal(
    trace.entries.map((e) => [e.step, e.index, e.thought]),
    [
      ['react_step', 1, 't1'],
      ['react_step', 2, 't2'],
      ['react_step', 3, 't3'],
    ],
  )
  for (const e of trace.entries) assert.ok(e.timestamp > 1.7e9 && e.timestamp < 1e10, 'seconds since the epoch')
  cleanup()
})

test('001.4R-UNIT-025 three entries serialize to three lines of NDJSON', () => {
  const entries = [1, 2, 3].map((index) => ({ step: 's', index, timestamp: 1, note: `n${index}` }))
  const text = toNdjson(entries)
  const lines = text.split('\n')
  assert.is(lines.length, 4)
  assert.is(lines[3], '')
  assert.equal(
    lines.slice(0, 3).map((l) => JSON.parse(l).note),
    ['n1', 'n2', 'n3'],
  )
})

test('001.4R-SEC-002 NUL bytes from model output are stripped before anything is written', async () => {
  const { ctx, workspace, cleanup } = fileContext()
  const tracer = new Tracer(ctx, 'reason.cot', 'trace.jsonl')
  tracer.add('cot_response', { thinking: 'a\0b', ['k\0ey']: ['x\0'] })
  await tracer.finish()
  const bytes = readFileSync(path.join(workspace, 'trace.jsonl'))
  assert.not.ok(bytes.includes(0), 'a raw NUL byte reached the file')
  assert.not.ok(bytes.toString().includes('\\u0000'), 'an escaped NUL reached the file')
  assert.equal(JSON.parse(bytes.toString()).key, ['x'])
  assert.equal(withoutNul({ a: ['\0'] }), { a: [''] })
  cleanup()
})

test('a trace_file outside the workspace is refused like a file.* path', async () => {
  const { ctx, cleanup } = fileContext()
  const tracer = new Tracer(ctx, 'reason.cot', '../escape.jsonl')
  tracer.add('x')
  await rejects(() => tracer.finish(), 'PATH_OUTSIDE_WORKSPACE', '../escape.jsonl')
  cleanup()
})

test('001.4R-INT-013 streaming 1,000 large entries to a file keeps memory flat', async () => {
  const { ctx, workspace, cleanup } = fileContext()
  const big = 'x'.repeat(64 * 1024)
  // The trace file streams; the returned trace is what the action keeps. Here the writer alone is measured.
  const tracer = new Tracer(ctx, 'reason.react', 'big.jsonl')
  const entries = (tracer as unknown as { trace: { entries: unknown[] } }).trace.entries
  global.gc?.()
  const before = process.memoryUsage().heapUsed
  let peak = before
  for (let i = 0; i < 1000; i++) {
    tracer.add('react_step', { observation: big })
    entries.length = 0 // drop the kept entry: what remains in memory is the writer's
    if (i % 50 === 49) {
      await tracer.flushed()
      peak = Math.max(peak, process.memoryUsage().heapUsed)
    }
  }
  await tracer.finish()
  const lines = readFileSync(path.join(workspace, 'big.jsonl'), 'utf8').split('\n').length - 1
  assert.is(lines, 1000)
  // 1,000 entries of 64 KiB are 64 MiB; the writer may hold the queued lines of one turn, not the whole trace.
  assert.ok(peak - before < 32 * 1024 * 1024, `heap grew by ${((peak - before) / 1048576).toFixed(1)} MiB`)
  cleanup()
})

const t = benchSuite('traces of a running agent')

const react = (extra: string) => `name: traced
settings:
  llm: { model: "ollama:tiny" }
  workspace: $WORKSPACE
nodes:
  - name: research
    uses: reason.react
    with:
      goal: add numbers
      tools: [calc.add]
${extra}
    output: result
`

t('001.4R-INT-012 / 001.4R-E2E-004 a 5-step ReAct run with trace_file writes 5 lines, one per step, as they happen', async ({ b }) => {
  const add = { content: { thought: 'add', action: 'calc.add', action_input: { a: 1, b: 2 } } }
  b.server.script(add, add, add, add, { content: { thought: 'done', action: 'finish', action_input: { answer: 3 } } })
  const r = await b.go(react('      trace_file: traces/react.jsonl'))
  assert.is(r.status, 'completed')
  const lines = readFileSync(path.join(b.workspace, 'traces', 'react.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  assert.is(lines.length, 5)
  assert.equal(
    lines.map((l) => [l.index, l.action]),
    [
      [1, 'calc.add'],
      [2, 'calc.add'],
      [3, 'calc.add'],
      [4, 'calc.add'],
      [5, 'finish'],
    ],
  )
  assert.is(lines[0].observation, '{"sum":3}')
  assert.equal((r.state.result as any).reasoning_trace.entries, lines)
})

t('001.4R-INT-017 every step is a reasoning event on the run stream, with its fields', async ({ b }) => {
  b.server.script(
    { content: { thought: 'add', action: 'calc.add', action_input: { a: 1, b: 1 } } },
    {
      content: { thought: 'done', action: 'finish', action_input: { answer: 2 } },
    },
  )
  const r = await b.go(react(''))
  const steps = r.events.filter((e) => e.type === 'reasoning') as Array<Extract<RunEvent, { type: 'reasoning' }>>
  assert.is(steps.length, 2)
  assert.equal(
    steps.map((e) => [e.node, e.action, e.entry.index, e.entry.action]),
    [
      ['research', 'reason.react', 1, 'calc.add'],
      ['research', 'reason.react', 2, 'finish'],
    ],
  )
  // They arrive between the node's start and its end.
  const types = r.events.map((e) => e.type)
  assert.ok(types.indexOf('node_start') < types.indexOf('reasoning'))
  assert.ok(types.lastIndexOf('reasoning') < types.indexOf('node_end'))
})

test.run()
t.run()
