/**
 * The event vocabulary of a run (SPEC §3.1, `--stream`). The engine emits most of them, actions emit `subtask`,
 * `llm_token`, `log` and `reasoning`, and the CLI (later `tea serve`) turns them into output. It lives in core because every
 * layer from actions upwards speaks it and none of them owns it.
 */

import type { State } from './util.ts'

export type RunEvent =
  | { type: 'start'; runId: string; agent: string; resumed: boolean }
  | { type: 'node_start'; node: string; step: number }
  | { type: 'node_end'; node: string; step: number; ms: number; update: State }
  | { type: 'interrupt'; node: string; when: 'before' | 'after'; runId: string }
  | { type: 'error'; node?: string; error: Record<string, unknown> }
  | { type: 'subtask'; planId: string; id: string; status: string; [key: string]: unknown }
  | { type: 'llm_token'; node: string; token: string }
  | { type: 'log'; node: string; message: string }
  /** One step of a reasoning action (a thought, a tool call, a critique…), as it is recorded in its trace. */
  | { type: 'reasoning'; node: string; action: string; entry: Record<string, unknown> }
  /** A span of TEA's trace.start / trace.log / trace.end: opened, an event logged in it, closed (with its totals). */
  | { type: 'span'; node: string; phase: 'start' | 'log' | 'end'; span: Record<string, unknown> }
  | { type: 'complete'; state: State }
