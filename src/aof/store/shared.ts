/**
 * What both task stores decide alike and neither owns: whether an agent still holds a task, which of two copies of a
 * task an import keeps, what a companion-file path may be. The two backends (fs/, nats/)
 * never import each other; what they share is here, beside the port.
 */

import { TeaError } from '../../core/errors.ts'
import { type Task, taskLease } from '../protocol/task-file.ts'

/** The task if `agent` holds its lease in progress; AOF_LOCKED (lost) otherwise.  */
export function holdingTask(task: Task | undefined, id: string, agent: string): Task {
  if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found`)
  const lease = taskLease(task)
  if (task.status !== 'in-progress' || lease?.agent !== agent) {
    throw new TeaError('AOF_LOCKED', `${agent} no longer holds ${id} (status ${task.status}, lease ${lease?.agent ?? 'none'})`, {
      details: { lost: true },
    })
  }
  return task
}

/** What writing `incoming` over `existing` does, by `updatedAt` (both stores decide the same way). */
export function compareStamps(existing: Task | undefined, incoming: Task): 'created' | 'replaced' | 'same' | 'kept' {
  if (!existing) return 'created'
  const a = Date.parse(String(existing.data.updatedAt ?? ''))
  const b = Date.parse(String(incoming.data.updatedAt ?? ''))
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return 'same'
  return Number.isNaN(a) || b > a ? 'replaced' : 'kept'
}

/** A companion-folder path: relative, `/`-separated, never leaving the folder. */
export function relativePath(path: string): string {
  const parts = path.split('/')
  if (path === '' || path.startsWith('/') || parts.some((p) => p === '..' || p === '' || p === '.')) {
    throw new TeaError(
      'AOF_INVALID',
      `expected a path inside the task's folder such as outputs/report.md, received ${JSON.stringify(path)}`,
    )
  }
  return path
}
