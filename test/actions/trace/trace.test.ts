import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { validateParams } from '../../../src/actions/registry.ts'
import type { Action } from '../../../src/actions/types.ts'
import { traceActions } from '../../../src/actions/trace/index.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { testContext, type TestContext } from '../context.ts'

const byName = (name: string): Action => traceActions.find((a) => a.name === name)!

async function run(ctx: TestContext, name: string, params: unknown): Promise<Record<string, unknown>> {
  const action = byName(name)
  return (await action.run(validateParams(action, params), ctx)) as Record<string, unknown>
}

test("trace.start, trace.log and trace.end give TEA's results and write the span into the run events", async () => {
  const ctx = testContext({ store: createMemoryStore(), state: { secret: 's3', n: 1, usage: { total_tokens: 7 } } })
  try {
    const outer = await run(ctx, 'trace.start', { name: 'request', metadata: { user: 'u1' } })
    assert.equal(outer.success, true)
    assert.equal(outer.name, 'request')
    assert.equal(outer.parent_id, null)
    assert.match(String(outer.span_id), /^[0-9a-f-]{36}$/)
    const inner = await run(ctx, 'trace.start', { name: 'step' })
    assert.equal(inner.parent_id, outer.span_id)
    const logged = await run(ctx, 'trace.log', { message: 'half', metrics: { items: 3 }, snapshot_state: true, sanitize_keys: ['secret'] })
    assert.equal(logged, { logged: true, span_id: inner.span_id, event_count: 1, success: true })
    assert.equal((await run(ctx, 'trace.log', {})).event_count, 2)
    const ended = await run(ctx, 'trace.end', { status: 'error', error: 'boom' })
    assert.equal(ended.span_id, inner.span_id)
    assert.equal(ended.status, 'error')
    assert.equal(typeof ended.duration_ms, 'number')
    assert.equal((await run(ctx, 'trace.end', {})).span_id, outer.span_id)
    assert.equal(await run(ctx, 'trace.end', {}), { success: false, error: 'No active span to end' })
    assert.equal(await run(ctx, 'trace.log', { message: 'late' }), { success: false, error: 'No active span to log to', logged: false })

    const spans = ctx.events.filter((e) => e.type === 'span')
    assert.equal(
      spans.map((e) => e.phase),
      ['start', 'start', 'log', 'log', 'end', 'end'],
    )
    const log = spans[2]!.span as { event: Record<string, unknown>; metrics: Record<string, unknown> }
    assert.equal(log.event.message, 'half')
    assert.equal(log.event.state_snapshot, { secret: '[REDACTED]', n: 1, usage: { total_tokens: 7 } })
    assert.equal(log.metrics, { items: 3, total_tokens: 7 })
    const end = spans[4]!.span
    assert.equal(end.name, 'step')
    assert.equal(end.status, 'error')
    assert.equal(end.error, 'boom')
    assert.equal(end.event_count, 2)
    assert.equal(end.metrics, { items: 3, total_tokens: 14 })
    assert.equal((spans[5]!.span as Record<string, unknown>).metadata, { user: 'u1' })
  } finally {
    ctx.cleanup()
  }
})

test('open spans are kept per run: another run sees none', async () => {
  const store = createMemoryStore()
  const a = testContext({ store, runId: 'run-a' })
  const b = testContext({ store, runId: 'run-b' })
  try {
    await run(a, 'trace.start', { name: 'x' })
    assert.equal((await run(b, 'trace.end', {})).success, false)
    assert.equal((await run(a, 'trace.end', {})).success, true)
  } finally {
    a.cleanup()
    b.cleanup()
  }
})

test.run()
