/**
 * The action port. An action is `{name, description, params, run}`: `params` is a valibot schema (it gives the
 * type, the validator and, through @valibot/to-json-schema, the JSON Schema `tea actions --json` prints), and `run`
 * receives validated parameters and a context, and returns the update to merge into state.
 */

import type { GenericSchema } from 'valibot'
import type { State } from '../core/util.ts'
import type { LlmClient, LlmSettings } from '../llm/types.ts'
import type { Store } from '../store/types.ts'

export type RunEvent =
  | { type: 'start'; runId: string; agent: string; resumed: boolean }
  | { type: 'node_start'; node: string; step: number }
  | { type: 'node_end'; node: string; step: number; ms: number; update: State }
  | { type: 'interrupt'; node: string; when: 'before' | 'after'; runId: string }
  | { type: 'error'; node?: string; error: Record<string, unknown> }
  | { type: 'subtask'; planId: string; id: string; status: string; [key: string]: unknown }
  | { type: 'llm_token'; node: string; token: string }
  | { type: 'log'; node: string; message: string }
  | { type: 'complete'; state: State }

/** An agent's `settings`, resolved with defaults. */
export interface AgentSettingsView {
  llm: LlmSettings
  max_steps: number
  /** Absolute folder that file.* actions are confined to. */
  workspace: string
  allow_inline_code: boolean
  /** Default time limit for `run:` code, seconds. */
  run_timeout: number
  checkpoint_keep: number
  planner: Record<string, unknown>
}

export interface ActionContext {
  runId: string
  /** The node running this action. */
  node: string
  /** The state before this node (read-only: return updates instead). */
  state: Readonly<State>
  variables: Readonly<Record<string, unknown>>
  settings: AgentSettingsView
  llm: LlmClient
  store: Store
  /** The run's data dir (`--data-dir`), for actions that keep files beside the store (AOF). */
  dataDir?: string
  signal: AbortSignal
  emit(event: RunEvent): void
  /**
   * Runs another node of the same agent on `state` and returns its update, without routing, interrupts or a
   * checkpoint (what `retry.loop` needs for its correction node).
   */
  runNode(name: string, state: State): Promise<State>
  /** Renders a template value (string, or a tree of them) with the standard scope plus `extra`. */
  render(value: unknown, extra?: Record<string, unknown>, field?: string): unknown
  /** Every action this build has (for tools.list). */
  listActions(): Action[]
  /** Runs a registered action by name: params validated, same context. */
  invoke(action: string, params: unknown, state?: State): Promise<State>
}

export interface Action<P = any> {
  name: string
  description: string
  params: GenericSchema<unknown, P>
  run(params: P, ctx: ActionContext): Promise<State> | State
  /** The build feature providing this action, for UNKNOWN_ACTION hints. */
  feature?: string
  /**
   * Top-level params the engine passes as written instead of rendering them first, because the action renders them
   * itself with names of its own in scope (`subtask` in plan.execute's executor, `data` in json.transform).
   */
  raw?: readonly string[]
}

export function defineAction<P>(action: Action<P>): Action<P> {
  return action
}
