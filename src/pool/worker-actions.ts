/**
 * Running a registered action inside a worker. The registry is built lazily, once per worker, from the same
 * built-ins and feature actions as the main thread's. The context it gets is a thin one: the model client, store
 * and event stream are the main thread's, reached through host calls on the task's port (see protocol.ts), so a
 * worker opens no LMDB environment, no cassette and no sockets of its own for them.
 */

import { TeaError } from '../core/errors.ts'
import type { Action, ActionContext, AgentSettingsView, RunEvent } from '../actions/types.ts'
import type { LlmClient, LlmRequest } from '../llm/types.ts'
import type { Store } from '../store/types.ts'
import type { ActionTask, TaskContext } from './protocol.ts'
import type { HostCaller } from './worker.ts'

interface WorkerRegistry {
  require(name: string): Action
  list(): Action[]
  validate(action: Action, params: unknown, where: string): unknown
  render(value: unknown, scope: Record<string, unknown>, node: string, field?: string): unknown
}

let registry: Promise<WorkerRegistry> | undefined

function loadRegistry(): Promise<WorkerRegistry> {
  registry ??= (async () => {
    const [reg, builtins, features, template] = await Promise.all([
      import('../actions/registry.ts'),
      import('../actions/builtins.ts'),
      import('../features.ts'),
      import('../template/index.ts'),
    ])
    const r = reg.createRegistry([...builtins.builtinActions(), ...features.featureActions()])
    return { require: (name) => r.require(name), list: () => r.list(), validate: (a, p, w) => reg.validateParams(a, p, w),
      render: (value, scope, node, field) => template.compileValue(value, { node, field }).render(scope),
    }
  })()
  return registry
}

export async function runActionTask(task: ActionTask, host: HostCaller | undefined): Promise<unknown> {
  const reg = await loadRegistry()
  const ctx = contextFor(task.context, task.where, host, reg)
  const action = reg.require(task.action)
  return action.run(reg.validate(action, task.params, task.where), ctx)
}

/** The `ctx` of `run:` code in a worker: the same thin context an action there gets. */
export async function workerContext(context: TaskContext, where: string, host: HostCaller | undefined): Promise<ActionContext> {
  return contextFor(context, where, host, await loadRegistry())
}

function contextFor(context: TaskContext, where: string, host: HostCaller | undefined, reg: WorkerRegistry): ActionContext {
  const task = { where, context }
  const noHost = (what: string) => new TeaError('POOL_ERROR', `${task.where}: ${what} is not reachable from this worker task`)
  const call = (method: string, ...args: unknown[]) => (host ? host.call(method, ...args) : Promise.reject(noHost(method)))
  const llm: LlmClient = {
    call(request: LlmRequest) {
      // Functions and signals cannot cross threads; a worker's model call is not streamed token by token.
      const { onToken: _t, signal: _s, ...rest } = request
      return call('llm.call', rest) as ReturnType<LlmClient['call']>
    },
    close: async () => {},
  }
  const store = new Proxy({} as Store, {
    get: (_t, method) => (...args: unknown[]) => call(`store.${String(method)}`, ...args),
  })
  const ctx: ActionContext = {
    runId: task.context.runId,
    node: task.context.node,
    state: task.context.state,
    variables: task.context.variables,
    settings: task.context.settings as unknown as AgentSettingsView,
    llm,
    store,
    signal: new AbortController().signal,
    emit(event: RunEvent) {
      host?.notify('emit', event)
    },
    runNode: () => Promise.reject(new TeaError('POOL_ERROR', `${task.where}: ctx.runNode is not available inside a plan subtask`)),
    render(value, extra, field) {
      return reg.render(value, { state: ctx.state, variables: ctx.variables, ...extra }, ctx.node, field)
    },
    listActions: () => reg.list(),
    async invoke(name, params, state) {
      const action = reg.require(name)
      return action.run(reg.validate(action, params, `${task.where} → ${name}`), state ? { ...ctx, state } : ctx)
    },
  }
  if (task.context.dataDir !== undefined) ctx.dataDir = task.context.dataDir
  return ctx
}
