/**
 * How a task's time limit is kept. A self-timed task (`run:` code, whose loops are guarded) stops itself at its
 * limit and keeps its worker; the pool terminates the thread only when that fails (a long call into a built-in),
 * after a grace period. Any other task's worker is terminated at the limit.
 */

import { TeaError } from '../core/errors.ts'
import type { PoolTask } from './protocol.ts'

export interface TimeLimit {
  /** The limit the handler enforces itself (ms), sent as the task's `timeoutMs`. */
  soft?: number
  /** When the pool terminates the worker (ms after the task started). */
  hard?: number
}

export function timeLimit(task: PoolTask, timeoutMs: number | undefined): TimeLimit {
  if (timeoutMs === undefined || !(timeoutMs > 0)) return {}
  if (task.selfTimed !== true) return { hard: timeoutMs }
  const soft = Math.ceil(timeoutMs)
  return { soft, hard: soft + graceMs(soft) }
}

/** How long a worker may take to stop its own code before it is terminated: 1 s, plus 10 % for long limits. */
function graceMs(limitMs: number): number {
  return 1000 + Math.ceil(limitMs / 10)
}

/** The error of a task whose worker was terminated at its limit. */
export function timedOut(task: PoolTask, timeoutMs: number): TeaError {
  return new TeaError('POOL_ERROR', `timed out after ${timeoutMs} ms; its worker was terminated`, {
    where: task.where,
    details: { reason: 'timeout', timeoutMs },
  })
}
