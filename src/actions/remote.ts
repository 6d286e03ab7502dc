/**
 * Actions in a worker thread: the `action` task (a registered action run by name, parameters rendered in the main
 * thread) and the ActionContext a worker gives an action or `run:` code. It is the same RunContext as on the main
 * thread; only its services differ: the model client, the store port and the event sink are the main thread's,
 * reached through host calls on the task's port (src/pool/protocol.ts), so a worker opens no LMDB environment, no
 * cassette and no sockets of its own, and the context's signal fires when the task's caller cancels it.
 *
 * The main-thread half is `hostMethods`: exactly the methods the worker half forwards, and nothing more.
 */

import type { HostCaller, HostMethods, PoolTask, TaskResult } from '../pool/index.ts'
import { TeaError } from '../core/errors.ts'
import type { Where } from '../core/issues.ts'
import type { RunEvent } from '../core/events.ts'
import type { EmbedRequest, LlmClient, LlmRequest } from '../llm/types.ts'
import type { RouteOutcome } from '../aof/protocol/route-outcome.ts'
import { RunContext, type ContextServices } from './context.ts'
import { validateParams, type Registry } from './registry.ts'
import { ACTION_STORE_METHODS, type ActionContext, type ActionStore, type AgentSettingsView } from './types.ts'

/** What an action or `run:` code in a worker knows of its run; its `ctx` is built from it there. */
export interface TaskContext {
  runId: string
  node: string
  state: Record<string, unknown>
  variables: Record<string, unknown>
  settings: AgentSettingsView
  dataDir?: string
  /** The run has an AOF router (`ctx.aof`): the worker's `aof.*` actions reach it through a host call. */
  aof?: true
}

export interface ActionTask extends PoolTask {
  kind: 'action'
  action: string
  params: unknown
  context: TaskContext
}

/** What crosses to a worker for a context made from `ctx`. */
export function taskContext(ctx: ActionContext, state: Record<string, unknown>): TaskContext {
  const c: TaskContext = { runId: ctx.runId, node: ctx.node, state, variables: { ...ctx.variables }, settings: { ...ctx.settings } }
  if (ctx.dataDir !== undefined) c.dataDir = ctx.dataDir
  if (ctx.aof !== undefined) c.aof = true
  return c
}

/** The main thread's answers to a worker's context: its model client, store port and event sink. */
export function hostMethods(ctx: ActionContext): HostMethods {
  const host: HostMethods = {
    'llm.call': (request: LlmRequest) => ctx.llm.call({ ...request, signal: ctx.signal }),
    'llm.embed': (request: EmbedRequest) =>
      ctx.llm.embed
        ? ctx.llm.embed({ ...request, signal: ctx.signal })
        : Promise.reject(new TeaError('LLM_BAD_MODEL', 'this model client has no embeddings')),
    emit: (event: RunEvent) => ctx.emit(event),
  }
  const aof = ctx.aof
  if (aof) host['aof.route'] = (message: unknown) => aof.route(message)
  for (const method of ACTION_STORE_METHODS)
    host[`store.${method}`] = (...args: unknown[]) => (ctx.store[method] as (...a: unknown[]) => unknown)(...args)
  return host
}

export async function runActionTask(task: ActionTask, host: HostCaller | undefined, registry: Registry): Promise<TaskResult> {
  const ctx = remoteContext(task.context, task.where, host, registry)
  const action = registry.require(task.action)
  return { value: await action.run(validateParams(action, task.params, task.where), ctx) }
}

/** The ActionContext of a task in a worker, its services forwarded to the main thread through `host`. */
export function remoteContext(
  context: TaskContext,
  where: Where | undefined,
  host: HostCaller | undefined,
  registry: Registry,
): ActionContext {
  const call = (method: string, ...args: unknown[]): Promise<unknown> =>
    host
      ? host.call(method, ...args)
      : Promise.reject(new TeaError('POOL_ERROR', `${method} is not reachable from this worker task`, { where }))
  const llm: LlmClient = {
    call(request) {
      // Functions and signals cannot cross threads; the main thread applies the run's signal to the call, and a
      // worker's model call is not streamed token by token.
      const { onToken: _t, signal: _s, ...rest } = request
      return call('llm.call', rest) as ReturnType<LlmClient['call']>
    },
    embed(request) {
      const { signal: _s, ...rest } = request
      return call('llm.embed', rest) as ReturnType<NonNullable<LlmClient['embed']>>
    },
    close: async () => {},
  }
  const store = {} as Record<string, unknown>
  for (const method of ACTION_STORE_METHODS) store[method] = (...args: unknown[]) => call(`store.${method}`, ...args)
  const services: ContextServices = {
    runId: context.runId,
    variables: context.variables,
    settings: context.settings,
    llm,
    store: store as unknown as ActionStore,
    emit: (event) => host?.notify('emit', event),
    registry,
  }
  if (context.dataDir !== undefined) services.dataDir = context.dataDir
  if (context.aof) services.aof = { route: (message) => call('aof.route', message) as Promise<RouteOutcome> }
  return new RunContext(services, context.node, context.state, host?.signal ?? new AbortController().signal)
}
