/**
 * The dependency graph of a plan, without a graph library. Edges run from a dependency to its dependent.
 * Every order this module returns is deterministic: ties are broken by declaration order, so the same plan always
 * runs (and checkpoints, and renders) the same way.
 */

import { TeaError } from '../core/errors.ts'

export interface DagNode {
  id: string
  dependencies: readonly string[]
}

export type DagIssue =
  | { kind: 'empty'; message: string }
  | { kind: 'duplicate'; id: string; message: string }
  | { kind: 'unknown_dependency'; id: string; dependency: string; message: string }
  | { kind: 'self_reference'; id: string; message: string }
  | { kind: 'cycle'; path: string[]; message: string }

/** Every problem at once (STYLE 7): an empty plan, duplicate ids, unknown dependencies, self-references, cycles. */
export function dagIssues(nodes: readonly DagNode[]): DagIssue[] {
  if (nodes.length === 0) return [{ kind: 'empty', message: 'the plan has no subtasks' }]
  const issues: DagIssue[] = []
  const seen = new Set<string>()
  for (const n of nodes) {
    if (seen.has(n.id)) issues.push({ kind: 'duplicate', id: n.id, message: `subtask id '${n.id}' is used twice` })
    seen.add(n.id)
  }
  for (const n of nodes) {
    for (const d of n.dependencies) {
      if (d === n.id) issues.push({ kind: 'self_reference', id: n.id, message: `subtask '${n.id}' depends on itself` })
      else if (!seen.has(d))
        issues.push({
          kind: 'unknown_dependency',
          id: n.id,
          dependency: d,
          message: `subtask '${n.id}' depends on '${d}', which is not in the plan (known: ${[...seen].join(', ')})`,
        })
    }
  }
  for (const path of findCycles(nodes))
    issues.push({ kind: 'cycle', path, message: `dependency cycle: ${path.join(' → ')}` })
  return issues
}

/** Throws PLAN_CYCLE when the only problems are cycles, PLAN_INVALID otherwise; lists every issue. */
export function assertDag(nodes: readonly DagNode[], where?: string): void {
  const issues = dagIssues(nodes)
  if (issues.length === 0) return
  const code = issues.every((i) => i.kind === 'cycle') ? 'PLAN_CYCLE' : 'PLAN_INVALID'
  const list = issues.map((i) => `  - ${i.message}`).join('\n')
  throw new TeaError(code, `${where ? `${where}: ` : ''}invalid plan${issues.length === 1 ? '' : `, ${issues.length} problems`}:\n${list}`, {
    details: { issues },
  })
}

/**
 * Cycles as paths that start and end at the same id, e.g. `['A', 'B', 'A']` when A depends on B and B on A, read
 * in execution terms as "A waits for B waits for A". Self-references are reported separately, not here. Each
 * strongly connected group yields one cycle, found by a DFS in declaration order, so the report is stable.
 */
export function findCycles(nodes: readonly DagNode[]): string[][] {
  const byId = new Map<string, DagNode>()
  for (const n of nodes) if (!byId.has(n.id)) byId.set(n.id, n)
  const state = new Map<string, 1 | 2>() // 1 = on the current path, 2 = finished
  const cycles: string[][] = []
  // An explicit stack instead of recursion: a 10,000-step chain would overflow the call stack.
  const path: Array<{ id: string; next: number }> = []
  for (const root of byId.keys()) {
    if (state.has(root)) continue
    state.set(root, 1)
    path.push({ id: root, next: 0 })
    while (path.length > 0) {
      const top = path[path.length - 1]!
      const deps = byId.get(top.id)!.dependencies
      if (top.next >= deps.length) {
        state.set(top.id, 2)
        path.pop()
        continue
      }
      const d = deps[top.next++]!
      if (d === top.id || !byId.has(d)) continue
      const s = state.get(d)
      if (s === 1) cycles.push([...path.slice(path.findIndex((p) => p.id === d)).map((p) => p.id), d])
      else if (s === undefined) {
        state.set(d, 1)
        path.push({ id: d, next: 0 })
      }
    }
  }
  return cycles
}

/**
 * Kahn's algorithm with a declaration-order tie-break: among the subtasks whose dependencies are all placed, the
 * one declared first goes next. Assumes a valid DAG (call `assertDag` first); unknown dependencies are ignored.
 */
export function topologicalOrder(nodes: readonly DagNode[]): string[] {
  return readyWaves(nodes).flat()
}

/**
 * The plan as waves: wave 0 holds the subtasks without dependencies, wave k those whose last dependency is in
 * wave k−1. Everything in one wave may run in parallel. Each wave lists ids in declaration order.
 */
export function readyWaves(nodes: readonly DagNode[]): string[][] {
  const index = new Map<string, number>()
  nodes.forEach((n, i) => index.has(n.id) || index.set(n.id, i))
  const remaining = new Map<string, number>()
  const dependents = new Map<string, number[]>()
  for (const [id, i] of index) {
    const deps = new Set(nodes[i]!.dependencies.filter((d) => d !== id && index.has(d)))
    remaining.set(id, deps.size)
    for (const d of deps) {
      const list = dependents.get(d)
      if (list) list.push(i)
      else dependents.set(d, [i])
    }
  }
  const waves: string[][] = []
  let wave = [...index].filter(([id]) => remaining.get(id) === 0).map(([, i]) => i)
  let placed = 0
  while (wave.length > 0) {
    wave.sort((a, b) => a - b)
    waves.push(wave.map((i) => nodes[i]!.id))
    placed += wave.length
    const next: number[] = []
    for (const i of wave) {
      for (const j of dependents.get(nodes[i]!.id) ?? []) {
        const id = nodes[j]!.id
        const left = remaining.get(id)! - 1
        remaining.set(id, left)
        if (left === 0) next.push(j)
      }
    }
    wave = next
  }
  if (placed < index.size) assertDag(nodes)
  return waves
}

/** Every subtask that depends on `id`, directly or through others, in declaration order (what `skip` skips). */
export function transitiveDependents(nodes: readonly DagNode[], id: string): string[] {
  const dependents = new Map<string, string[]>()
  for (const n of nodes)
    for (const d of n.dependencies) {
      const list = dependents.get(d)
      if (list) list.push(n.id)
      else dependents.set(d, [n.id])
    }
  const found = new Set<string>()
  const queue = [id]
  for (let q = queue.shift(); q !== undefined; q = queue.shift())
    for (const dep of dependents.get(q) ?? []) {
      if (found.has(dep) || dep === id) continue
      found.add(dep)
      queue.push(dep)
    }
  return nodes.filter((n) => found.has(n.id)).map((n) => n.id)
}
