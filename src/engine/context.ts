/**
 * The ActionContext an action sees: the run's services plus the node it runs in. `runNode` and `invoke` let an
 * action run another node or another action by name (retry.loop, plan.execute), through the same code paths the
 * engine uses, so validation and timeouts behave identically.
 *
 * One is made per node execution, so it is a class: one allocation, methods on the prototype (call them as
 * methods: `ctx.render(…)`, not a detached `render`).
 */

import { TeaError } from '../core/errors.ts'
import type { State } from '../core/util.ts'
import type { Action, ActionContext, AgentSettingsView, RunEvent } from '../actions/types.ts'
import { validateParams } from '../actions/registry.ts'
import type { LlmClient } from '../llm/types.ts'
import type { Store } from '../store/types.ts'
import { compileValue } from '../template/index.ts'
import { executeOnce } from './execute.ts'
import type { Runtime } from './runtime.ts'

class NodeContext implements ActionContext {
  readonly runId: string
  readonly variables: Readonly<Record<string, unknown>>
  readonly settings: AgentSettingsView
  readonly llm: LlmClient
  readonly store: Store
  readonly dataDir?: string
  readonly emit: (event: RunEvent) => void

  constructor(
    private readonly rt: Runtime,
    readonly node: string,
    readonly state: State,
    readonly signal: AbortSignal,
  ) {
    this.runId = rt.runId
    this.variables = rt.spec.variables
    this.settings = rt.spec.settings
    this.llm = rt.llm
    this.store = rt.store
    if (rt.dataDir !== undefined) this.dataDir = rt.dataDir
    this.emit = rt.emit
  }

  async runNode(name: string, onState: State): Promise<State> {
    const target = this.rt.agent.nodes.get(name)
    if (!target) throw new TeaError('UNKNOWN_NODE', `node '${this.node}': runNode('${name}'): no such node in this agent`)
    const result = await executeOnce(this.rt, target, onState, this.signal)
    return target.toUpdate(result, onState)
  }

  render(value: unknown, extra?: Record<string, unknown>, field = 'value'): unknown {
    return compileValue(value, { node: this.node, field }).render({ state: this.state, variables: this.variables, ...extra })
  }

  listActions(): Action[] {
    return this.rt.registry.list()
  }

  async invoke(name: string, params: unknown, onState: State = this.state): Promise<State> {
    const action = this.rt.registry.require(name)
    const valid = validateParams(action, params, `node '${this.node}' → ${name}`)
    return asUpdate(await action.run(valid, new NodeContext(this.rt, this.node, onState, this.signal)))
  }
}

export function actionContext(rt: Runtime, node: string, state: State, signal: AbortSignal): ActionContext {
  return new NodeContext(rt, node, state, signal)
}

/** Actions return objects; anything else is kept under `result` (TEA's rule). */
export function asUpdate(result: unknown): State {
  if (result === undefined || result === null) return {}
  if (typeof result === 'object' && !Array.isArray(result)) return result as State
  return { result }
}
