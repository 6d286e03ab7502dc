/**
 * The dependency graph of a plan, without a graph library. Edges run from a dependency to its dependent.
 * Every order this module returns is deterministic: ties are broken by declaration order, so the same plan always
 * runs (and checkpoints, and renders) the same way.
 */

import { TeaError } from '../core/errors.ts'
import type { Issue } from '../core/issues.ts'

export interface DagNode {
  id: string
  dependencies: readonly string[]
}

/**
 * A plan's problems are issues: `code` is the kind (below) and `where.subtask` the subtask at fault, so the text
 * reads `subtask b: depends on 'zz', …`; an unknown dependency's id is also `received`.
 */
export type DagIssueCode = 'empty' | 'duplicate' | 'unknown_dependency' | 'self_reference' | 'cycle'

/** Every problem at once (STYLE 7): an empty plan, duplicate ids, unknown dependencies, self-references, cycles. */
export function dagIssues(nodes: readonly DagNode[]): Issue[] {
  const issue = (code: DagIssueCode, message: string, subtask?: string, received?: string): Issue => ({
    code,
    message,
    ...(subtask !== undefined && { where: { subtask } }),
    ...(received !== undefined && { received }),
  })
  if (nodes.length === 0) return [issue('empty', 'the plan has no subtasks')]
  const issues: Issue[] = []
  const seen = new Set<string>()
  for (const n of nodes) {
    if (seen.has(n.id)) issues.push(issue('duplicate', 'its id is used twice', n.id))
    seen.add(n.id)
  }
  for (const n of nodes) {
    for (const d of n.dependencies) {
      if (d === n.id) issues.push(issue('self_reference', 'depends on itself', n.id))
      else if (!seen.has(d)) {
        issues.push(issue('unknown_dependency', `depends on '${d}', which is not in the plan (known: ${[...seen].join(', ')})`, n.id, d))
      }
    }
  }
  for (const path of findCycles(nodes)) issues.push(issue('cycle', `dependency cycle: ${path.join(' → ')}`))
  return issues
}

/**
 * Throws PLAN_CYCLE when the only problems are cycles, PLAN_INVALID otherwise, carrying every issue. `what` names
 * the plan in the message (`invalid revised plan`).
 */
export function assertDag(nodes: readonly DagNode[], what = 'plan'): void {
  if (isDag(nodes)) return
  const issues = dagIssues(nodes)
  const code = issues.every((i) => i.code === 'cycle') ? 'PLAN_CYCLE' : 'PLAN_INVALID'
  throw new TeaError(code, `invalid ${what}${issues.length === 1 ? '' : `, ${issues.length} problems`}`, { issues })
}

/**
 * Whether `dagIssues` would find nothing, in one pass over integer arrays: ids unique, every dependency known and
 * not the subtask itself, and every subtask placed by Kahn's algorithm (no cycle). It is what a valid plan pays for
 * its check, on every read of it (a 1,000-subtask plan.execute spent ~18 µs a subtask in this module, cold; issue
 * 14); a plan that fails it gets dagIssues' full account.
 */
function isDag(nodes: readonly DagNode[]): boolean {
  const n = nodes.length
  if (n === 0) return false
  const index = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    if (index.has(nodes[i]!.id)) return false
    index.set(nodes[i]!.id, i)
  }
  // Each edge as (dependency → dependent), grouped by dependency: `first[d]` … `first[d + 1]` in `dependents`.
  const waiting = new Int32Array(n)
  const first = new Int32Array(n + 1)
  for (let i = 0; i < n; i++) {
    for (const dep of nodes[i]!.dependencies) {
      const d = index.get(dep)
      if (d === undefined || d === i) return false
      waiting[i]!++
      first[d + 1]!++
    }
  }
  for (let d = 0; d < n; d++) first[d + 1]! += first[d]!
  const dependents = new Int32Array(first[n]!)
  const fill = first.slice(0, n)
  for (let i = 0; i < n; i++) for (const dep of nodes[i]!.dependencies) dependents[fill[index.get(dep)!]!++] = i
  const queue = new Int32Array(n)
  let tail = 0
  for (let i = 0; i < n; i++) if (waiting[i] === 0) queue[tail++] = i
  for (let head = 0; head < tail; head++) {
    const d = queue[head]!
    for (let e = first[d]!; e < first[d + 1]!; e++) if (--waiting[dependents[e]!]! === 0) queue[tail++] = dependents[e]!
  }
  return tail === n
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
