/**
 * The reasoning trace (AC6). Every reasoning action records what it did as a list of entries — a model request,
 * a thought, a tool call and its observation, a critique — each stamped with its time and its place in the list,
 * and returns them as a `ReasoningTrace`. Each entry is also, as it happens, a `reasoning` event on the run's
 * event stream (so `--stream` and `--trace` show it: our counterpart of the Rust design's tracing spans), and with
 * `trace_file` a line of NDJSON appended to that file inside the workspace.
 *
 * The file is written through `file.write` (append), so the path is confined exactly like file.* paths and the
 * writer keeps nothing: each line is written and dropped, and memory stays flat however long the trace. NUL bytes
 * are stripped from every string (keys included) before a line is written or an entry is returned: a model's
 * output is not trusted to be text.
 */

import { randomUUID } from 'node:crypto'
import * as v from 'valibot'
import type { ActionContext } from '../actions/types.ts'
import { monotonicMs } from '../core/util.ts'

/** The `trace_file` parameter every reasoning action takes. */
export const traceFileEntry = v.optional(
  v.pipe(
    v.string(),
    v.minLength(1),
    v.description('A file in the workspace (a path as file.write takes) to append each trace entry to as it happens, as NDJSON.'),
  ),
)

export interface TraceEntry {
  /** What happened: `llm_request`, `thought`, `action`, `observation`, `critique`, … */
  step: string
  /** Place in the trace, from 1. */
  index: number
  /** Seconds since the epoch (TEA's unit). */
  timestamp: number
  [key: string]: unknown
}

export interface ReasoningTrace {
  /** The action that made it, e.g. `reason.react`. */
  action_type: string
  node: string
  span_id: string
  /** Seconds since the epoch. */
  start_time: number
  end_time?: number
  duration_ms?: number
  entries: TraceEntry[]
}

export class Tracer {
  private readonly trace: ReasoningTrace
  private readonly started = monotonicMs()
  private writing: Promise<unknown> = Promise.resolve()
  private writeFailure: unknown

  constructor(
    private readonly ctx: ActionContext,
    action: string,
    /** Workspace-relative NDJSON file to append each entry to. */
    private readonly file?: string,
    /** Entries recorded before a crash, when the action resumes. */
    earlier: readonly TraceEntry[] = [],
  ) {
    this.trace = { action_type: action, node: ctx.node, span_id: randomUUID(), start_time: Date.now() / 1000, entries: [...earlier] }
  }

  get entries(): readonly TraceEntry[] {
    return this.trace.entries
  }

  /** Records one entry: kept, emitted as an event, appended to the trace file. */
  add(step: string, data: Record<string, unknown> = {}): TraceEntry {
    const entry = withoutNul({ ...data, step, index: this.trace.entries.length + 1, timestamp: Date.now() / 1000 }) as TraceEntry
    this.trace.entries.push(entry)
    this.ctx.emit({ type: 'reasoning', node: this.ctx.node, action: this.trace.action_type, entry })
    if (this.file !== undefined) {
      const line = `${JSON.stringify(entry)}\n`
      const path = this.file
      // One append at a time, in order; a failed write fails the action when it finishes (see `finish`).
      this.writing = this.writing
        .then(() => this.writeFailure ?? this.ctx.invoke('file.write', { path, content: line, append: true }))
        .catch((e: unknown) => {
          this.writeFailure ??= e
        })
    }
    return entry
  }

  /** Resolves when every entry so far is in the trace file. */
  async flushed(): Promise<void> {
    await this.writing
  }

  /** Waits for the trace file's writes and returns the finished trace. */
  async finish(): Promise<ReasoningTrace> {
    await this.writing
    if (this.writeFailure !== undefined) throw this.writeFailure
    this.trace.end_time = Date.now() / 1000
    this.trace.duration_ms = Math.round((monotonicMs() - this.started) * 1000) / 1000
    return this.trace
  }
}

/** The entries as NDJSON: one JSON object per line, NUL bytes stripped. */
export function toNdjson(entries: readonly TraceEntry[]): string {
  return entries.map((e) => `${JSON.stringify(withoutNul(e))}\n`).join('')
}

/** A copy of `value` with NUL bytes removed from every string and key. */
export function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\0') ? value.replaceAll('\0', '') : value
  if (Array.isArray(value)) return value.map(withoutNul)
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[withoutNul(k) as string] = withoutNul(v)
    return out
  }
  return value
}
