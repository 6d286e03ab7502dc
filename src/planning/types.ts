/**
 * The plan model. A plan is what `plan.decompose` puts in state as `plan` and what `plan.execute`, `plan.replan` and
 * `plan.status` read back, so every field is plain JSON with snake_case names (YAML authors see them through
 * templates such as `{{ state.plan.subtasks | length }}`).
 */

export const SUBTASK_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'skipped'] as const
export type SubtaskStatus = (typeof SUBTASK_STATUSES)[number]

export const PLAN_STRATEGIES = ['flat', 'hierarchical', 'iterative'] as const
export type PlanStrategy = (typeof PLAN_STRATEGIES)[number]

export const FAILURE_STRATEGIES = ['abort', 'skip', 'retry', 'replan'] as const
export type FailureStrategy = (typeof FAILURE_STRATEGIES)[number]

export interface Subtask {
  id: string
  description: string
  /** Ids of the subtasks that must complete first. */
  dependencies: string[]
  status: SubtaskStatus
  result?: unknown
  error?: string
  /** Executions so far (1 = ran once). */
  attempts?: number
  /** Hierarchical plans: the id of the group this subtask came from. */
  parent?: string
  /** Seconds; overrides `plan.execute`'s `timeout` for this subtask. */
  timeout?: number
}

export interface Plan {
  id: string
  goal: string
  strategy: PlanStrategy
  subtasks: Subtask[]
  /** The model that made the plan (`provider:model`); `plan.replan` uses the same one. */
  model?: string
  replan_count: number
  max_replans: number
  created_at: number
  /** Why the last replan changed what it changed, as the model put it. */
  rationale?: string
}

/** `plan_progress` in state, refreshed after every subtask. */
export interface PlanProgress {
  completed: number
  failed: number
  skipped: number
  pending: number
  in_progress: number
  total: number
}

/** What a subtask runs with: the state as its dependencies left it, and their results by id. */
export interface SubtaskInput {
  state: Record<string, unknown>
  dependency_results: Record<string, unknown>
}

/** What one run of a subtask gave: its result, and what its code changed in state (set keys, removed keys). */
export interface SubtaskOutput {
  value: unknown
  stateUpdate?: Record<string, unknown>
  removed?: string[]
}

/** A subtask as the model proposes it, before it has a status. */
export interface ProposedSubtask {
  id: string
  description: string
  dependencies: string[]
  timeout?: number
  parent?: string
}

export function newSubtask(p: ProposedSubtask): Subtask {
  const s: Subtask = { id: p.id, description: p.description, dependencies: [...p.dependencies], status: 'pending' }
  if (p.timeout !== undefined) s.timeout = p.timeout
  if (p.parent !== undefined) s.parent = p.parent
  return s
}

export function countStatuses(subtasks: readonly Subtask[]): PlanProgress {
  const p: PlanProgress = { completed: 0, failed: 0, skipped: 0, pending: 0, in_progress: 0, total: subtasks.length }
  for (const s of subtasks) p[s.status]++
  return p
}
