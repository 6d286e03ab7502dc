/**
 * The open spans of a run (TEA's trace context, tracing.py): a stack, the innermost last, kept in the store under
 * the run's id so that it lasts from one node to the next and across a resume. Each span holds only what its end
 * reports (its start, metadata, event count and metrics): the events themselves go to the run's event stream, and
 * so to `--trace` / `settings.auto_trace`'s file, as they happen.
 */

import type { ActionContext } from '../types.ts'

export interface OpenSpan {
  span_id: string
  parent_id: string | null
  name: string
  start_ms: number
  metadata: Record<string, unknown>
  event_count: number
  metrics: Record<string, unknown>
}

const NAMESPACE = 'tea.trace'
/** A run that opens spans and never closes them leaves its stack behind for a day, not forever. */
const KEEP_MS = 24 * 60 * 60 * 1000
/** Deeper than any real nesting; an agent looping on trace.start is stopped here rather than growing the entry. */
export const MAX_OPEN_SPANS = 100

export async function openSpans(ctx: ActionContext): Promise<OpenSpan[]> {
  const got = await ctx.store.memoryGet(NAMESPACE, ctx.runId)
  return got.found && Array.isArray(got.value) ? (got.value as OpenSpan[]) : []
}

export async function saveSpans(ctx: ActionContext, spans: readonly OpenSpan[]): Promise<void> {
  if (spans.length === 0) await ctx.store.memoryDelete(NAMESPACE, ctx.runId)
  else await ctx.store.memoryPut(NAMESPACE, ctx.runId, spans, KEEP_MS)
}
