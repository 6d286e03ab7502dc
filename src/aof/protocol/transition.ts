/**
 * A task's move between statuses as a value, the same on every store: checked against the transition table,
 * `updatedAt` and `lastTransitionAt` moved strictly forward, `metadataPatch` merged, and the lease dropped whenever
 * the task leaves `in-progress` (the reference kept it on review/blocked, which its own lint then flagged). Where the
 * moved task is written — a file renamed into another folder, a compare-and-set on an entry — is the store's business.
 */

import { TeaError } from '../../core/errors.ts'
import type { EventInput } from './events.ts'
import { TRANSITIONS, type TaskStatus, isValidTransition } from './status.ts'
import { type Task, nextStamp, taskMetadata } from './task-file.ts'

export interface TransitionOptions {
  actor: string
  reason?: string
  metadataPatch?: Record<string, unknown>
  /** A fixed id for the move's event (protocol/events.ts `EventInput.eventId`). */
  eventId?: string
}

/** `task` moved to `to` (AOF_TRANSITION when the table does not allow it), stamped at `stamp`. */
export function moved(task: Task, to: TaskStatus, stamp: Date, options: TransitionOptions): Task {
  if (!isValidTransition(task.status, to)) {
    throw new TeaError(
      'AOF_TRANSITION',
      `${task.id}: cannot move from ${task.status} to ${to}; allowed from ${task.status}: ${TRANSITIONS[task.status].join(', ') || 'none (terminal)'}`,
    )
  }
  const at = nextStamp(task, stamp)
  const data: Record<string, unknown> = { ...task.data, status: to, updatedAt: at, lastTransitionAt: at }
  if (options.metadataPatch) data.metadata = { ...taskMetadata(task), ...options.metadataPatch }
  if (to !== 'in-progress') delete data.lease
  return { ...task, status: to, data }
}

/** The `task.transitioned` event of moving `task` to `to`. */
export function transitionEvent(task: Task, to: TaskStatus, options: TransitionOptions): EventInput {
  return {
    type: 'task.transitioned',
    actor: options.actor,
    taskId: task.id,
    payload: { from: task.status, to, ...(options.reason ? { reason: options.reason } : {}) },
    ...(options.eventId ? { eventId: options.eventId } : {}),
  }
}
