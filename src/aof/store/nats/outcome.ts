/**
 * Applying a run's reported outcome on NATS in the scheduler's recovery of a run that wrote its result but died
 * before moving the task (`poll.ts`): the moves as one value, written with one compare-and-set on the revision the
 * staleness was decided on. Its events carry the ids the worker's report gives them (roles/worker-report.ts), so
 * should both log a run's completion the stream's duplicate window keeps one copy.
 */

import { outcomeReason, resolveCompletionTransitions } from '../../protocol/outcome.ts'
import type { EventInput } from '../../protocol/events.ts'
import type { RunResult } from '../../protocol/schemas/run.ts'
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
