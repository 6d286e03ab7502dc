/**
 * The outcome map (reference `resolveCompletionTransitions`): `done` → review (→ done when
 * `metadata.reviewRequired === false`), `blocked` → blocked, `needs_review` and `partial` → review. Steps the task
 * has already reached are dropped, so a repeated report resolves to nothing. Applying skips a step the transition
 * table does not allow (e.g. anything from `done`) instead of failing.
 */

import type { Outcome } from './schemas/payloads.ts'
import { type TaskStatus, isValidTransition } from './status.ts'

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

/** One step of an outcome: a move the table allows, or one it does not (skipped, never an error). */
export interface OutcomeSteps {
  applied: Array<{ from: TaskStatus; to: TaskStatus }>
  skipped: Array<{ from: TaskStatus; to: TaskStatus }>
}

/**
 * The moves that apply `outcome` to a task in `status`, each checked against the transition table: the rule every
 * store follows, whether it then writes the moves one by one (under a lock) or as one value (a compare-and-set).
 */
export function outcomeSteps(task: OutcomeSubject, outcome: Outcome): OutcomeSteps {
  const out: OutcomeSteps = { applied: [], skipped: [] }
  let from = task.status
  for (const to of resolveCompletionTransitions(task, outcome)) {
    if (!isValidTransition(from, to)) {
      out.skipped.push({ from, to })
      continue
    }
    out.applied.push({ from, to })
    from = to
  }
  return out
}

/** The transition reason for an outcome: the blockers for `blocked`, else the notes. */
export function outcomeReason(outcome: Outcome, blockers: readonly string[] | undefined, notes: string | undefined): string | undefined {
  if (outcome === 'blocked' && blockers && blockers.length > 0) return blockers.join('; ')
  return notes || undefined
}
