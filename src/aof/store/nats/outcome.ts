/**
 * Applying a run's reported outcome on NATS, shared by the worker's report (`report.ts`) and the scheduler's
 * recovery of a run that wrote its result but died before moving the task (`poll.ts`). Both decide on the same
 * task revision and write with one compare-and-set, so the outcome lands once whoever gets there first; their
 * events carry ids derived from the task and run, so the loser's re-publish is dropped by the stream's duplicate
 * window instead of logging the moves twice.
 */

import { outcomeReason, resolveCompletionTransitions } from '../../protocol/outcome.ts'
import type { EventInput } from '../../protocol/events.ts'
import type { RunArtifact, RunResult } from '../../protocol/schemas/run.ts'
import { type TaskStatus, isValidTransition } from '../../protocol/status.ts'
import { type Task, taskMetadata } from '../../protocol/task-file.ts'
import type { NatsOps } from './ops.ts'

export interface OutcomeMove {
  next: Task
  applied: Array<{ from: TaskStatus; to: TaskStatus }>
  events: EventInput[]
  ids: string[]
}

/** The task after the result's outcome (one value, for one compare-and-set), and the events that go with it. */
export function outcomeMove(ops: NatsOps, task: Task, result: RunResult, at: Date, actor: string, reasonPrefix = ''): OutcomeMove {
  const blockers = result.outcome === 'blocked' && result.blockers.length ? `: ${result.blockers.join('; ')}` : ''
  const reason = reasonPrefix ? `${reasonPrefix}${result.outcome}${blockers}` : outcomeReason(result.outcome, result.blockers, result.notes)
  let next = task
  const applied: OutcomeMove['applied'] = []
  const events: EventInput[] = []
  const ids: string[] = []
  for (const to of resolveCompletionTransitions({ status: task.status, metadata: taskMetadata(task) }, result.outcome)) {
    const from = next.status
    if (!isValidTransition(from, to)) continue
    next = ops.moved(next, to, at, { actor, ...(reason ? { reason } : {}) })
    applied.push({ from, to })
    events.push({ type: 'task.transitioned', actor, taskId: task.id, payload: { from, to, ...(reason ? { reason } : {}) } })
    ids.push(outcomeEventId(task.id, result.runId, `to-${to}`))
  }
  return { next, applied, events, ids }
}

/** An event id that is the same whoever applies run `runId`'s outcome, so the stream keeps one copy. */
export function outcomeEventId(taskId: string, runId: string | undefined, what: string): string {
  return `outcome-${taskId}-${runId ?? 'norun'}-${what}`
}

export function completedRun(run: RunArtifact, at: Date): RunArtifact {
  return { ...run, status: 'completed', metadata: { ...run.metadata, completedAt: at.toISOString() } }
}
