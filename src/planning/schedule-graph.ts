/**
 * The shape of a plan the scheduler works from: topological positions, dependents, how many dependencies each
 * pending subtask still waits for, and the ready queue. Rebuilt from scratch when a replan changes the plan.
 */

import { topologicalOrder } from './dag.ts'
import { ReadyQueue } from './ready-queue.ts'
import type { Plan, Subtask, SubtaskOutput } from './types.ts'

export interface Graph {
  order: string[]
  position: Map<string, number>
  byId: Map<string, Subtask>
  dependents: Map<string, string[]>
  /** Pending subtask → dependencies not yet completed. */
  waiting: Map<string, number>
  ready: ReadyQueue
}

export function graphOf(plan: Plan): Graph {
  const order = topologicalOrder(plan.subtasks)
  const position = new Map(order.map((id, i) => [id, i]))
  const byId = new Map(plan.subtasks.map((s) => [s.id, s]))
  const dependents = new Map<string, string[]>()
  const waiting = new Map<string, number>()
  const ready = new ReadyQueue()
  for (const s of plan.subtasks) {
    for (const d of new Set(s.dependencies)) {
      const list = dependents.get(d)
      if (list) list.push(s.id)
      else dependents.set(d, [s.id])
    }
    if (s.status !== 'pending') continue
    const left = new Set(s.dependencies.filter((d) => byId.get(d)?.status !== 'completed')).size
    waiting.set(s.id, left)
    if (left === 0) ready.push(position.get(s.id)!, s.id)
  }
  return { order, position, byId, dependents, waiting, ready }
}

export function ancestorsOf(g: Graph, id: string): Set<string> {
  const seen = new Set<string>()
  const stack = [...g.byId.get(id)!.dependencies]
  for (let d = stack.pop(); d !== undefined; d = stack.pop()) {
    if (seen.has(d)) continue
    seen.add(d)
    stack.push(...(g.byId.get(d)?.dependencies ?? []))
  }
  return seen
}

export function applyAll(
  state: Record<string, unknown>,
  ids: readonly string[],
  updates: Map<string, SubtaskOutput>,
): Record<string, unknown> {
  for (const id of ids) {
    const u = updates.get(id)
    if (!u) continue
    if (u.stateUpdate) Object.assign(state, u.stateUpdate)
    for (const k of u.removed ?? []) delete state[k]
  }
  return state
}
