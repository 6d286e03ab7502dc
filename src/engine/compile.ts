/**
 * AgentSpec → CompiledAgent: the node's templates, conditions and `run:` body were compiled once while loading
 * (agent/references.ts, the pass that validates them); here they are wired into closures so running a node is a
 * few property reads and a call (SPEC §4: ≤ 5 µs per plain action node, ≤ 10 µs with a template).
 */

import * as v from 'valibot'
import { TeaError } from '../core/errors.ts'
import type { State } from '../core/util.ts'
import type { Action } from '../actions/types.ts'
import { validateParams, type Registry } from '../actions/registry.ts'
import { END, type AgentSpec, type NodeSpec } from '../agent/types.ts'
import type { CompiledCode } from '../code/compile.ts'

/** What `next` returns for a node with a parallel edge: the run loop starts its branches. */
export const FAN_OUT = '__fan_out__'

export interface CompiledNode {
  spec: NodeSpec
  name: string
  /** For action nodes. */
  action?: Action
  /** Renders `with:` for a state; returns the validated params. */
  params?: (state: State) => unknown
  code?: CompiledCode
  /** Result → the update merged into state (applies `output:`). */
  toUpdate(result: State, state: State): State
  /** Where to go after this node; `__end__` ends the run. Throws NO_ROUTE when goto rules all fail. */
  next(state: State, result: State | undefined): string
  /** False when `next` ignores its arguments (no goto rules), so callers need not build the merged state. */
  routesOnState: boolean
  /** Seconds, or undefined for no limit (action nodes) / the default (code nodes). */
  timeout?: number
}

export interface CompiledAgent {
  nodes: Map<string, CompiledNode>
  entry: string
}

export function compileAgent(spec: AgentSpec, registry: Registry): CompiledAgent {
  const nodes = new Map<string, CompiledNode>()
  for (const node of spec.nodes) nodes.set(node.name, compileNode(node, spec, registry))
  return { nodes, entry: spec.entry }
}

function compileNode(node: NodeSpec, spec: AgentSpec, registry: Registry): CompiledNode {
  const variables = spec.variables
  // Templates see the resolved settings as `settings` (TEA agents write `{{ settings.llm.model }}`).
  const settings = spec.settings
  const where = { node: node.name }
  let action: Action | undefined
  let params: ((state: State) => unknown) | undefined
  const unsupported = node.unsupported
  if (unsupported !== undefined) {
    // A TEA feature tea does not provide (the loader warned): the node fails when the run reaches it.
    action = {
      name: node.uses ?? 'tea',
      description: unsupported,
      params: v.unknown(),
      run: () => {
        throw new TeaError('TEA_UNSUPPORTED', unsupported, { where, hint: 'docs/tea-compat.md lists what tea provides' })
      },
    }
    params = () => ({})
  } else if (node.uses !== undefined) {
    const a = registry.require(node.uses)
    action = a
    const raw = selfRendered(node.with ?? {}, a.raw)
    const withValue = node.compiled.with
    if (!withValue || withValue.static) {
      const fixed = validateParams(a, node.with ?? {}, where)
      params = () => fixed
    } else {
      params = (state) => validateParams(a, { ...(withValue.render({ state, variables, settings }) as object), ...raw }, where)
    }
  }
  const code = node.run !== undefined && unsupported === undefined ? node.compiled.code : undefined
  if (node.run !== undefined && unsupported === undefined && !code)
    throw new TeaError('INTERNAL', 'its run: code was not compiled while loading', { where })
  return {
    spec: node,
    name: node.name,
    ...(action && { action }),
    ...(params && { params }),
    ...(code && { code }),
    ...(node.timeout !== undefined && { timeout: node.timeout }),
    toUpdate: compileOutput(node, spec),
    next: compileRouting(node, spec),
    routesOnState: Array.isArray(node.goto),
  }
}

/** The params an action renders itself (Action.raw), passed as written. */
function selfRendered(params: Record<string, unknown>, rawKeys: readonly string[] | undefined): Record<string, unknown> {
  const raw: Record<string, unknown> = {}
  for (const k of rawKeys ?? []) if (Object.hasOwn(params, k)) raw[k] = params[k]
  return raw
}

function compileOutput(node: NodeSpec, spec: AgentSpec): CompiledNode['toUpdate'] {
  const { variables, settings } = spec
  const output = node.output
  if (output === undefined) return (result) => result
  if (typeof output === 'string') return (result) => ({ [output]: result })
  const mapping = node.compiled.output
  if (!mapping) throw new TeaError('INTERNAL', 'its output: mapping was not compiled while loading', { where: { node: node.name } })
  return (result, state) => mapping.render({ state, variables, settings, result }) as State
}

function compileRouting(node: NodeSpec, spec: AgentSpec): CompiledNode['next'] {
  const { variables, settings } = spec
  const goto = node.goto
  if (typeof goto === 'string') return () => goto
  if (Array.isArray(goto)) {
    const rules = goto.map((rule, i) => ({ to: rule.to, test: node.compiled.goto?.[i] }))
    return (state, result) => {
      for (const rule of rules) if (!rule.test || rule.test({ state, result, variables, settings })) return rule.to
      if (node.routedByEdges)
        // TEA stops there too ("No valid next node found"); said in the terms of the edges the author wrote.
        throw new TeaError(
          'NO_ROUTE',
          'none of its conditional edges (when:, condition:) held, and no edge without a condition leaves it',
          {
            where: { node: node.name },
            hint: `add an edge from '${node.name}' without a condition, after the conditional ones, for every other case`,
          },
        )
      throw new TeaError('NO_ROUTE', "no goto rule matched and there is no fallback rule (a rule without 'if')", {
        where: { node: node.name },
        hint: `add '- to: <node>' or '- to: __end__' as the last rule`,
      })
    }
  }
  const fixed = spec.parallel.has(node.name) ? FAN_OUT : (spec.edges.get(node.name) ?? spec.nodes[node.index + 1]?.name ?? END)
  return () => fixed
}
