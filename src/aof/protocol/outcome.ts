/**
 * The outcome map (reference `resolveCompletionTransitions`): `done` → review (→ done when
 * `metadata.reviewRequired === false`), `blocked` → blocked, `needs_review` and `partial` → review. Steps the task
 * has already reached are dropped, so a repeated report resolves to nothing. Applying skips a step the transition
 * table does not allow (e.g. anything from `done`) instead of failing.
 */

import type { AofContext } from '../store/fs/context.ts'
import type { TaskUnit } from '../store/port.ts'
import type { Outcome } from './schemas/payloads.ts'
import { type TaskStatus, isValidTransition } from './status.ts'
import { type Task, taskMetadata } from './task-file.ts'
import { moveTaskLocked } from '../store/fs/task-transition.ts'

export interface OutcomeSubject {
  status: TaskStatus
  metadata?: Record<string, unknown>
}

export function resolveCompletionTransitions(task: OutcomeSubject, outcome: Outcome): TaskStatus[] {
  const steps: TaskStatus[] =
    outcome === 'done'
      ? task.metadata?.reviewRequired === false
        ? ['review', 'done']
        : ['review']
      : outcome === 'blocked'
        ? ['blocked']
        : ['review']
  const reached = steps.indexOf(task.status)
  return reached === -1 ? steps : steps.slice(reached + 1)
}

export interface AppliedOutcome {
  task: Task
  applied: Array<{ from: TaskStatus; to: TaskStatus }>
  skipped: Array<{ from: TaskStatus; to: TaskStatus }>
}

/** Applies the outcome's steps to a task whose lock the caller holds; one `task.transitioned` event per step. */
export function applyOutcomeLocked(
  ctx: AofContext,
  task: Task,
  outcome: Outcome,
  actor: string,
  reason: string | undefined,
): AppliedOutcome {
  const result: AppliedOutcome = { task, applied: [], skipped: [] }
  for (const to of resolveCompletionTransitions({ status: task.status, metadata: taskMetadata(task) }, outcome)) {
    const from = result.task.status
    if (!isValidTransition(from, to)) {
      result.skipped.push({ from, to })
      continue
    }
    result.task = moveTaskLocked(ctx, result.task, to, { actor, ...(reason ? { reason } : {}) })
    result.applied.push({ from, to })
  }
  return result
}

/** `applyOutcomeLocked` inside a unit of work on any task store. */
export async function applyOutcome(
  unit: TaskUnit,
  outcome: Outcome,
  actor: string,
  reason: string | undefined,
): Promise<Omit<AppliedOutcome, 'task'>> {
  const result: Omit<AppliedOutcome, 'task'> = { applied: [], skipped: [] }
  for (const to of resolveCompletionTransitions({ status: unit.task.status, metadata: taskMetadata(unit.task) }, outcome)) {
    const from = unit.task.status
    if (!isValidTransition(from, to)) {
      result.skipped.push({ from, to })
      continue
    }
    await unit.move(to, { actor, ...(reason ? { reason } : {}) })
    result.applied.push({ from, to })
  }
  return result
}

/** The transition reason for an outcome: the blockers for `blocked`, else the notes. */
export function outcomeReason(outcome: Outcome, blockers: readonly string[] | undefined, notes: string | undefined): string | undefined {
  if (outcome === 'blocked' && blockers && blockers.length > 0) return blockers.join('; ')
  return notes || undefined
}
