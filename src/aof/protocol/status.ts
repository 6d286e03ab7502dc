/**
 * The AOF status machine, identical to the reference implementation's `isValidTransition` table. A same-status
 * "transition" is a no-op decided by the caller before the table is consulted.
 */

export const TASK_STATUSES = ['backlog', 'ready', 'in-progress', 'blocked', 'review', 'done', 'cancelled', 'deadletter'] as const

export type TaskStatus = (typeof TASK_STATUSES)[number]

export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  backlog: ['ready', 'blocked', 'cancelled'],
  ready: ['in-progress', 'blocked', 'deadletter', 'cancelled'],
  'in-progress': ['review', 'ready', 'blocked', 'deadletter', 'cancelled'],
  blocked: ['ready', 'deadletter', 'cancelled'],
  review: ['done', 'in-progress', 'blocked', 'cancelled'],
  done: [],
  cancelled: [],
  deadletter: ['ready'],
}

export function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value)
}

export function isValidTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to)
}
