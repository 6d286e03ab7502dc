/**
 * Running one node: once (`executeOnce`), and under its `on_error` policy (`executeNode`): retries with backoff,
 * `continue` (error recorded in `__error__`, normal routing), `fallback` (really routes to the named node — the
 * upstream only wrote a key), or `raise`. Control signals (cancel) always pass straight through.
 */

import { errorMessage, isTeaError, TeaError, withWhere } from '../core/errors.ts'
import { checkDepth, JSON_MAX_DEPTH } from '../core/json.ts'
import { isControlSignal } from '../core/signals.ts'
import { backoffDelay, sleep, type State } from '../core/util.ts'
import { asUpdate, RunContext } from '../actions/context.ts'
import type { CompiledNode } from './compile.ts'
import type { Runtime } from './runtime.ts'

export interface NodeOutcome {
  update: State
  result: State | undefined
  next: string
}

export async function executeNode(rt: Runtime, node: CompiledNode, state: State, signal: AbortSignal): Promise<NodeOutcome> {
  const policy = node.spec.onError
  const attempts = policy.mode === 'retry' ? 1 + policy.maxRetries : 1
  let failure: unknown
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(backoffDelay(attempt - 1, policy.retryDelay * 1000), signal)
    try {
      const result = await executeOnce(rt, node, state, signal)
      const update = node.toUpdate(result, state)
      // The store, the templates and the event feed all walk state recursively: a value nested thousands deep
      // (run: code can build one in a line) would overflow the stack where it is next encoded.
      checkDepth(update, 'its update', JSON_MAX_DEPTH, 'STATE_TOO_DEEP')
      return { update, result, next: node.next(node.routesOnState ? { ...state, ...update } : state, result) }
    } catch (e) {
      if (isControlSignal(e) || signal.aborted) throw e
      // A routing failure is a bug in the agent, not a flaky node: retrying it cannot help.
      if (isTeaError(e, 'NO_ROUTE')) throw e
      failure = e
    }
  }
  const error = nodeError(node, failure)
  // `__error__` keeps `node` at its top level: agents read `state.__error__.node` (docs/agents.md).
  const recorded = { ...error.toJSON(), node: node.name }
  if (policy.fallback !== undefined) return { update: { __error__: recorded }, result: undefined, next: policy.fallback }
  if (policy.mode === 'continue') {
    const update = { __error__: recorded }
    return { update, result: undefined, next: node.next({ ...state, ...update }, undefined) }
  }
  throw error
}

export async function executeOnce(rt: Runtime, node: CompiledNode, state: State, outer: AbortSignal): Promise<State> {
  const limit = node.timeout ?? (node.code ? rt.spec.settings.run_timeout : undefined)
  if (node.code) {
    const ctx = new RunContext(rt.services, node.name, state, outer)
    return node.code(
      {
        state,
        variables: rt.spec.variables,
        ctx,
        log: (message) => rt.emit({ type: 'log', node: node.name, message }),
        memoryMb: rt.spec.settings.run_memory_mb,
      },
      limit! * 1000,
    )
  }
  const params = node.params!(state)
  if (limit === undefined) return asUpdate(await node.action!.run(params, new RunContext(rt.services, node.name, state, outer)))
  // A per-node timeout aborts the action's signal (so HTTP and model calls stop) and fails the node.
  const controller = new AbortController()
  const onOuter = (): void => controller.abort(outer.reason)
  outer.addEventListener('abort', onOuter, { once: true })
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new TeaError('NODE_TIMEOUT', `exceeded its timeout of ${limit} s`, { where: { node: node.name } })
      controller.abort(e)
      reject(e)
    }, limit * 1000)
  })
  try {
    const run = Promise.resolve(node.action!.run(params, new RunContext(rt.services, node.name, state, controller.signal)))
    return asUpdate(await Promise.race([run, timeout]))
  } finally {
    clearTimeout(timer)
    outer.removeEventListener('abort', onOuter)
  }
}

/**
 * `ctx.runNode`: another node of the agent on `state`, its update without routing, interrupts or a checkpoint (what
 * `retry.loop` needs for its correction node). Given to the action context as a service, so the context does not
 * import the engine.
 */
export function nodeRunner(rt: Runtime): NonNullable<Runtime['services']['runNode']> {
  return async (name, onState, signal, from) => {
    const target = rt.agent.nodes.get(name)
    if (!target) throw new TeaError('UNKNOWN_NODE', `runNode('${name}'): no such node in this agent`, { where: { node: from } })
    const result = await executeOnce(rt, target, onState, signal)
    return target.toUpdate(result, onState)
  }
}

/** The error a failed node reports: its own code when it has one, always placed at the node and its action. */
function nodeError(node: CompiledNode, e: unknown): TeaError {
  const where = { node: node.name, ...(node.action && { action: node.action.name }) }
  if (isTeaError(e)) return withWhere(e, where)
  return new TeaError('NODE_FAILED', errorMessage(e), { cause: e, where })
}
