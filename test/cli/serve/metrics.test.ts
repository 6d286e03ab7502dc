/**
 * `tea serve`'s metrics (src/cli/serve/metrics.ts, issue 31 item 5) without a daemon: the exposition parses under a
 * strict reader; hostile label values (model names, node names) are escaped, not injected as lines or labels; a
 * metric's series are bounded; histograms count into the right buckets; the metered store counts only writes that
 * committed; the call scheduler's observers see each call's wait.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ServeMetrics } from '../../../src/cli/serve/metrics.ts'
import { createCallScheduler } from '../../../src/llm/call-scheduler.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { parseExposition } from '../../support/prometheus-text.ts'

test('31 item 5: the exposition parses; a node duration lands in its buckets; runs by status are gauges', () => {
  const m = new ServeMetrics()
  m.event('hello', { type: 'node_end', node: 'a', step: 1, ms: 30, update: {} })
  m.event('hello', { type: 'node_end', node: 'a', step: 2, ms: 2500, update: {} })
  m.runsStarted.inc({ kind: 'start' })
  m.runsEnded.inc({ status: 'completed' })
  const e = parseExposition(m.render({ completed: 4, failed: 1, queued: 2 }, 1))
  assert.is(e.types.get('tea_node_duration_seconds'), 'histogram')
  assert.is(e.types.get('tea_runs'), 'gauge')
  assert.is(e.types.get('tea_runs_ended_total'), 'counter')
  assert.is(e.get('tea_runs', { status: 'completed' }), 4)
  assert.is(e.get('tea_runs', { status: 'running' }), 0, 'every status is listed')
  assert.is(e.get('tea_runs', { status: 'queued' }), 2)
  assert.is(e.get('tea_runs_active'), 1)
  assert.is(e.get('tea_node_duration_seconds_bucket', { agent: 'hello', node: 'a', le: '0.01' }), 0)
  assert.is(e.get('tea_node_duration_seconds_bucket', { agent: 'hello', node: 'a', le: '0.05' }), 1)
  assert.is(e.get('tea_node_duration_seconds_bucket', { agent: 'hello', node: 'a', le: '5' }), 2)
  assert.is(e.get('tea_node_duration_seconds_count', { agent: 'hello', node: 'a' }), 2)
  assert.is(e.get('tea_node_duration_seconds_sum', { agent: 'hello', node: 'a' }), 2.53)
  assert.ok(e.get('process_resident_memory_bytes')! > 1e6)
  assert.ok(e.get('nodejs_heap_used_bytes')! > 0)
})

test('31 item 5: a hostile label value is escaped: no new line, label or sample comes of it', () => {
  const m = new ServeMetrics()
  const evil = 'x"} 1\nfake_metric{a="b'
  m.event(evil, { type: 'node_end', node: 'back\\slash', step: 1, ms: 1, update: {} })
  const text = m.render({}, 0)
  assert.not.match(text, /^fake_metric/m)
  const e = parseExposition(text)
  assert.is(e.get('tea_node_duration_seconds_count', { agent: evil, node: 'back\\slash' }), 1, 'it reads back as it was')
  assert.not.ok(e.samples.some((s) => s.name === 'fake_metric'))
})

test('31 item 5: series are bounded: past 500 label sets, new ones count under _other', () => {
  const m = new ServeMetrics()
  for (let i = 0; i < 700; i++) m.event('many', { type: 'node_end', node: `n${i}`, step: i, ms: 1, update: {} })
  const e = parseExposition(m.render({}, 0))
  const counts = e.samples.filter((s) => s.name === 'tea_node_duration_seconds_count')
  assert.is(counts.length, 501)
  assert.is(e.get('tea_node_duration_seconds_count', { agent: '_other', node: '_other' }), 200)
})

test('31 item 5: the metered store counts checkpoint writes once committed, and not a failed one', async () => {
  const m = new ServeMetrics()
  const inner = createMemoryStore()
  const store = m.meterStore(inner)
  const cursor = { next: 'b' }
  await store.createRun(
    { id: 'r', agent: 'a', agentPath: '/a.yaml', agentHash: 'h', status: 'running', node: null, step: 0, createdAt: 1, updatedAt: 1 },
    { step: 0, node: null, state: {}, cursor },
  )
  await store.appendStep('r', { step: 1, node: 'a', update: { x: 1 }, cursor })
  await store.appendStep('r', { step: 2, node: 'b', update: { x: 2 }, cursor })
  await store.snapshot('r', { step: 2, node: 'b', state: { x: 2 }, cursor })
  // A write that fails (a full disk) is not counted.
  const full = new Proxy(inner, {
    get: (target, prop) =>
      prop === 'appendStep' ? () => Promise.reject(new Error('no space left on device')) : Reflect.get(target, prop, target),
  })
  const refused = await m
    .meterStore(full)
    .appendStep('r', { step: 3, node: 'c', update: {}, cursor })
    .catch((e: Error) => e.message)
  assert.is(refused, 'no space left on device', 'the failure reaches the engine as it was')
  assert.equal((await store.getRun('r'))?.agent, 'a', 'other methods reach the store')
  const e = parseExposition(m.render({}, 0))
  assert.is(e.get('tea_checkpoints_written_total', { kind: 'step' }), 2)
  assert.is(e.get('tea_checkpoints_written_total', { kind: 'snapshot' }), 2)
})

test("31 item 5: the call scheduler's observers see each call's wait for a slot", async () => {
  const m = new ServeMetrics()
  const scheduler = createCallScheduler()
  const stop = m.observeScheduler(scheduler)
  const limits = { slots: 1, maxLoaded: 1, maxWaitMs: 60_000, holdMs: 0 }
  let release!: () => void
  const first = scheduler.run({ server: 's', model: 'tiny', limits }, () => new Promise<void>((r) => (release = r)))
  const second = scheduler.run({ server: 's', model: 'tiny', limits }, async () => {})
  await new Promise((r) => setTimeout(r, 60))
  release()
  await Promise.all([first, second])
  stop()
  await scheduler.run({ server: 's', model: 'tiny', limits }, async () => {}) // not observed any more
  const e = parseExposition(m.render({}, 0))
  assert.is(e.get('tea_model_queue_wait_seconds_count', { model: 'tiny' }), 2)
  assert.ok(e.get('tea_model_queue_wait_seconds_sum', { model: 'tiny' })! >= 0.05, 'the second call waited for the first')
})

test.run()
