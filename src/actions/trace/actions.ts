import { randomUUID } from 'node:crypto'
import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { MAX_OPEN_SPANS, openSpans, saveSpans } from './spans.ts'

const mapping = v.record(v.string(), v.unknown())

/**
 * TEA's trace.start, trace.log and trace.end (observability_actions.py), with its result shapes. TEA writes spans
 * to its own exporters; tea writes them into its run events (`type: span`), which `tea run --trace FILE` and
 * `settings.auto_trace` write to the trace file and `--stream` prints. Tracing is always on, as TEA's default.
 */
export const traceStart = defineAction({
  name: 'trace.start',
  description: 'Opens a trace span (inside the open one, unless parent_id names another); returns {span_id, name, parent_id, success}.',
  params: v.object({
    name: v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.description('What the span covers.')),
    metadata: v.optional(v.pipe(mapping, v.description('Data attached to the span.'))),
    parent_id: v.optional(v.pipe(v.string(), v.description('The parent span, when not the open one.'))),
  }),
  async run(p, ctx) {
    const spans = await openSpans(ctx)
    if (spans.length >= MAX_OPEN_SPANS)
      throw new TeaError('INVALID_PARAMS', `trace.start: ${MAX_OPEN_SPANS} spans are open; close one with trace.end first`)
    const span = {
      span_id: randomUUID(),
      parent_id: p.parent_id ?? spans.at(-1)?.span_id ?? null,
      name: p.name,
      start_ms: Date.now(),
      metadata: p.metadata ?? {},
      event_count: 0,
      metrics: {},
    }
    await saveSpans(ctx, [...spans, span])
    ctx.emit({
      type: 'span',
      node: ctx.node,
      phase: 'start',
      span: { span_id: span.span_id, parent_id: span.parent_id, name: span.name, metadata: span.metadata },
    })
    return { span_id: span.span_id, name: span.name, parent_id: span.parent_id, success: true }
  },
})

export const traceLog = defineAction({
  name: 'trace.log',
  description: 'Logs a message, event, metrics or a state snapshot to the open span; returns {logged, span_id, event_count, success}.',
  params: v.object({
    message: v.optional(v.pipe(v.string(), v.description('What happened.'))),
    event: v.optional(v.pipe(mapping, v.description('More data for the event.'))),
    metrics: v.optional(v.pipe(mapping, v.description("Merged into the span's metrics."))),
    snapshot_state: v.optional(v.pipe(v.boolean(), v.description('Record the state in the event.')), false),
    sanitize_keys: v.optional(v.pipe(v.array(v.string()), v.description('State keys recorded as [REDACTED] in a snapshot.'))),
  }),
  async run(p, ctx) {
    const spans = await openSpans(ctx)
    const span = spans.at(-1)
    if (!span) return { success: false, error: 'No active span to log to', logged: false }
    const event: Record<string, unknown> = { timestamp: Date.now() / 1000 }
    if (p.message) event.message = p.message
    if (p.event) Object.assign(event, p.event)
    if (p.snapshot_state) {
      const snapshot: Record<string, unknown> = { ...ctx.state }
      for (const k of p.sanitize_keys ?? []) if (Object.hasOwn(snapshot, k)) snapshot[k] = '[REDACTED]'
      event.state_snapshot = snapshot
    }
    if (p.metrics) Object.assign(span.metrics, p.metrics)
    addUsage(span.metrics, ctx.state.usage)
    span.event_count += 1
    await saveSpans(ctx, spans)
    ctx.emit({ type: 'span', node: ctx.node, phase: 'log', span: { span_id: span.span_id, event, metrics: span.metrics } })
    return { logged: true, span_id: span.span_id, event_count: span.event_count, success: true }
  },
})

export const traceEnd = defineAction({
  name: 'trace.end',
  description: 'Closes the open span; returns {span_id, duration_ms, status, success}.',
  params: v.object({
    status: v.optional(v.pipe(v.string(), v.maxLength(100), v.description('How the span ended: ok or error.')), 'ok'),
    error: v.optional(v.pipe(v.string(), v.description('The error, when status is error.'))),
  }),
  async run(p, ctx) {
    const spans = await openSpans(ctx)
    const span = spans.pop()
    if (!span) return { success: false, error: 'No active span to end' }
    await saveSpans(ctx, spans)
    const duration_ms = Date.now() - span.start_ms
    const { start_ms: _start, ...rest } = span
    ctx.emit({
      type: 'span',
      node: ctx.node,
      phase: 'end',
      span: { ...rest, duration_ms, status: p.status, error: p.error ?? null },
    })
    return { span_id: span.span_id, duration_ms, status: p.status, success: true }
  },
})

/** TEA adds a model's token counts in `state.usage` to the span's metrics at every log. */
function addUsage(metrics: Record<string, unknown>, usage: unknown): void {
  if (typeof usage !== 'object' || usage === null) return
  for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) {
    const n = (usage as Record<string, unknown>)[k]
    if (typeof n === 'number') metrics[k] = (typeof metrics[k] === 'number' ? (metrics[k] as number) : 0) + n
  }
}
