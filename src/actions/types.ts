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

export interface AgentSettingsView {
  llm: LlmSettings
  workspace: string
  max_steps: number
  allow_inline_code: boolean
  [key: string]: unknown
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
  signal: AbortSignal
  emit(event: RunEvent): void
  /**
   * Runs another node of the same agent on `state` and returns its update, without routing, interrupts or a
   * checkpoint (what `retry.loop` needs for its correction node).
   */
  runNode(name: string, state: State): Promise<State>
  /** Renders a template value (string, or a tree of them) with the standard scope plus `extra`. */
  render(value: unknown, extra?: Record<string, unknown>, field?: string): unknown
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
}

export function defineAction<P>(action: Action<P>): Action<P> {
  return action
}
