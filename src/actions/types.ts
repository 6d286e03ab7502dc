/**
 * The action port. An action is `{name, description, params, run}`: `params` is a valibot schema (it gives the
 * type, the validator and, through @valibot/to-json-schema, the JSON Schema `tea actions --json` prints), and `run`
 * receives validated parameters and a context, and returns the update to merge into state.
 */

import type { GenericSchema } from 'valibot'
import type { RouteOutcome } from '../aof/protocol/route-outcome.ts'
import type { RunEvent } from '../core/events.ts'
import type { State } from '../core/util.ts'
import type { LlmClient, LlmSettings } from '../llm/types.ts'
import type { Store } from '../store/types.ts'
import type { OutputHook } from '../template/index.ts'

export type { OutputHook }

/**
 * The part of the store actions may use: memory, plan records and collections. Runs and checkpoints belong to the engine. A
 * worker thread reaches these methods through host calls, so this list is also what crosses the thread boundary.
 */
export const ACTION_STORE_METHODS = [
  'memoryPut',
  'memoryGet',
  'memoryDelete',
  'memoryList',
  'putPlanHeader',
  'putSubtask',
  'getPlan',
  'collectionPut',
  'collectionGet',
  'collectionDelete',
  'collectionQuery',
  'collectionSearch',
  'collectionList',
  'collectionPage',
  'collectionInfo',
  'embeddingCacheGet',
  'embeddingCachePut',
] as const
export type ActionStore = Pick<Store, (typeof ACTION_STORE_METHODS)[number]>

/** The default of `settings.run_memory_mb`: what one `run:` node's code may take (docs/security.md). */
export const DEFAULT_RUN_MEMORY_MB = 256

/** An agent's `settings`, resolved with defaults. */
export interface AgentSettingsView {
  llm: LlmSettings
  max_steps: number
  /** Absolute folder that file.* actions are confined to. */
  workspace: string
  allow_inline_code: boolean
  /** Default time limit for `run:` code, seconds. */
  run_timeout: number
  /** Most memory one `run:` node's code may take, MiB (`settings.run_memory_mb`, default DEFAULT_RUN_MEMORY_MB). */
  run_memory_mb: number
  /** Hosts and CIDRs outbound HTTP may reach beyond the default destination policy (`settings.http.allow`). */
  http_allow: readonly string[]
  checkpoint_keep: number
  /** Most text one template render may build (`settings.max_template_bytes`). */
  max_template_bytes: number
  /**
   * A file written for TEA (it declares `state_schema`): a key missing from a dict reads as none in its templates,
   * as TEA's DotDict gives it (template/compile-template.ts `missingIsNone`; docs/agents.md).
   */
  missing_is_none?: true
  /**
   * Settings sections the core does not interpret, by key (e.g. `planner`, read by the planning feature), so the
   * core names no feature.
   */
  sections: Readonly<Record<string, Readonly<Record<string, unknown>>>>
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
  store: ActionStore
  /** The run's data dir (`--data-dir`), for actions that keep files beside the store (AOF). */
  dataDir?: string
  /** Where the run's AOF/1 messages go (`aof.*`) when not to the data dir's folders: see `AofRouter`. */
  aof?: AofRouter
  signal: AbortSignal
  emit(event: RunEvent): void
  /**
   * Runs another node of the same agent on `state` and returns its update, without routing, interrupts or a
   * checkpoint (what `retry.loop` needs for its correction node).
   */
  runNode(name: string, state: State): Promise<State>
  /** Renders a template value (string, or a tree of them) with the standard scope plus `extra`. */
  render(value: unknown, extra?: Record<string, unknown>, field?: string): unknown
  /**
   * Renders code with `{{ }}` in it (TEA renders `run:` code as a template) so that values reach the code only as
   * data: `outputFor(source)` gives the hook that prints each value for its place in that source (escaped inside a
   * string literal, a literal of the language elsewhere). Always text.
   */
  renderCode(source: string, outputFor: (source: string) => OutputHook, field?: string): string
  /** Every action this build has (for tools.list). */
  listActions(): Action[]
  /**
   * Runs a registered action by name: params validated, same context. With `timeoutMs` (a tool's time limit) the
   * action's signal also fires at the limit, and the call fails then with NODE_TIMEOUT even if the action does
   * not stop.
   */
  invoke(action: string, params: unknown, state?: State, options?: { timeoutMs?: number }): Promise<State>
}

/**
 * The task store a run's `aof.*` actions talk to, when it is not the data dir's folders: `tea run --nats URL` (and
 * `tea resume`) fill it with the JetStream store, opened on the first message (cli/aof-store.ts `aofRouterOf`);
 * `tea worker` on NATS fills it with the store it claims from (`{ route: (m) => routeOn(store, m) }`). Absent, the
 * actions route on the data dir as before. An action given `dataDir` explicitly routes there regardless.
 */
export interface AofRouter {
  /** Routes one AOF/1 envelope as `tea aof send` does (recorded, and applied once), and says what happened. */
  route(message: unknown): Promise<RouteOutcome>
}

export interface Action<P = any> {
  name: string
  description: string
  params: GenericSchema<unknown, P>
  run(params: P, ctx: ActionContext): Promise<State> | State
  /**
   * Top-level params the engine passes as written instead of rendering them first, because the action renders them
   * itself with names of its own in scope (`subtask` in plan.execute's executor, `data` in json.transform).
   */
  raw?: readonly string[]
  /**
   * Top-level params that name something the loader can check before a run: another action or a list of them
   * (`retry.loop`'s `validate`, `reason.react`'s `tools`) or a node of the same agent (`retry.loop`'s `correct`). A name written as a template is checked when it runs.
   */
  refers?: { action?: readonly string[]; node?: readonly string[] }
  /**
   * Deeper checks of a node's parameters as written than loading makes, for `tea validate`: asynchronous and
   * possibly costly (reading Prolog code starts the engine). Returns what is wrong, one message each.
   */
  verify?(params: Readonly<Record<string, unknown>>, ctx: VerifyContext): Promise<string[]>
  /**
   * Its parameters are code it runs (`python.run`, `lua.run`, `prolog.query`…): `settings.allow_inline_code: false`
   * refuses a node that uses it, and a tool list that names it, when the file loads.
   */
  runsCode?: true
}

export interface VerifyContext {
  settings: AgentSettingsView
  /** Another action of this build (validate.extraction asks prolog.query to read its rules). */
  action(name: string): Action | undefined
  signal: AbortSignal
}

export function defineAction<P>(action: Action<P>): Action<P> {
  return action
}
