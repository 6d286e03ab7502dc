/**
 * The ActionContext an action sees: the run's services plus the node it runs in. `runNode` and `invoke` let an
 * action run another node or another action by name (retry.loop, plan.execute), through the same code paths the
 * engine uses, so validation and timeouts behave identically.
 */

import { TeaError } from '../core/errors.ts'
import type { State } from '../core/util.ts'
import type { ActionContext } from '../actions/types.ts'
import { validateParams } from '../actions/registry.ts'
import { compileValue } from '../template/index.ts'
import { executeOnce } from './execute.ts'
import type { Runtime } from './runtime.ts'

export function actionContext(rt: Runtime, node: string, state: State, signal: AbortSignal): ActionContext {
  const { spec } = rt
  return {
    runId: rt.runId,
    node,
    state,
    variables: spec.variables,
    settings: spec.settings,
    llm: rt.llm,
    store: rt.store,
    signal,
    ...(rt.dataDir !== undefined && { dataDir: rt.dataDir }),
    emit: rt.emit,
    async runNode(name, onState) {
      const target = rt.agent.nodes.get(name)
      if (!target) throw new TeaError('UNKNOWN_NODE', `node '${node}': runNode('${name}'): no such node in this agent`)
      const result = await executeOnce(rt, target, onState, signal)
      return target.toUpdate(result, onState)
    },
    render(value, extra, field = 'value') {
      return compileValue(value, { node, field }).render({ state, variables: spec.variables, ...extra })
    },
    listActions: () => rt.registry.list(),
    async invoke(name, params, onState = state) {
      const action = rt.registry.require(name)
      const valid = validateParams(action, params, `node '${node}' → ${name}`)
      const result = await action.run(valid, actionContext(rt, node, onState, signal))
      return asUpdate(result)
    },
  }
}

/** Actions return objects; anything else is kept under `result` (TEA's rule). */
export function asUpdate(result: unknown): State {
  if (result === undefined || result === null) return {}
  if (typeof result === 'object' && !Array.isArray(result)) return result as State
  return { result }
}
