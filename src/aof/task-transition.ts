/**
 * Moving a task between status folders, crash-safely (lock held by the caller):
 *   1. write the updated file into the target folder (temp file + rename: complete or absent),
 *   2. rename the companion folder `<ID>/` along,
 *   3. delete the old file.
 * A crash after 1 or 2 leaves two copies, which the next reader repairs (task-store.ts); a crash before 1 leaves
 * the task untouched. Never zero copies. The lease is cleared whenever the task leaves `in-progress` (the reference
 * kept it on review/blocked, which its own lint then flagged).
 */

import { cpSync, existsSync, renameSync, rmSync } from 'node:fs'
import { TeaError } from '../core/errors.ts'
import { type AofContext, taskDirPath, taskFilePath } from './context.ts'
import { appendEvent } from './events.ts'
import { errno, writeFileAtomic } from './fs-atomic.ts'
import { TRANSITIONS, type TaskStatus, isValidTransition } from './status.ts'
import { type Task, nextStamp, renderTask, taskMetadata } from './task-file.ts'
import { readTaskLocked, withTaskLock } from './task-store.ts'

export interface TransitionOptions {
  actor: string
  reason?: string
  metadataPatch?: Record<string, unknown>
}

export function moveTaskLocked(ctx: AofContext, task: Task, to: TaskStatus, options: TransitionOptions): Task {
  if (task.status === to) return task
  if (!isValidTransition(task.status, to)) {
    throw new TeaError(
      'AOF_TRANSITION',
      `${task.id}: cannot move from ${task.status} to ${to}; allowed from ${task.status}: ${TRANSITIONS[task.status].join(', ') || 'none (terminal)'}`,
    )
  }
  const stamp = nextStamp(task, ctx.now())
  const data: Record<string, unknown> = { ...task.data, status: to, updatedAt: stamp, lastTransitionAt: stamp }
  if (options.metadataPatch) data.metadata = { ...taskMetadata(task), ...options.metadataPatch }
  if (to !== 'in-progress') delete data.lease
  const moved: Task = { ...task, status: to, data, path: taskFilePath(ctx, to, task.id) }

  writeFileAtomic(moved.path, renderTask(moved))
  moveCompanion(taskDirPath(ctx, task.status, task.id), taskDirPath(ctx, to, task.id))
  rmSync(task.path, { force: true })

  appendEvent(ctx, {
    type: 'task.transitioned',
    actor: options.actor,
    taskId: task.id,
    payload: { from: task.status, to, ...(options.reason ? { reason: options.reason } : {}) },
  })
  return moved
}

function moveCompanion(from: string, to: string): void {
  try {
    renameSync(from, to)
  } catch (e) {
    if (errno(e) === 'ENOENT') return
    if (errno(e) !== 'ENOTEMPTY' && errno(e) !== 'EEXIST') throw e
    // A companion folder is already at the target (left by an earlier crash): merge, keeping the newer files.
    if (existsSync(from)) {
      cpSync(from, to, { recursive: true, force: true })
      rmSync(from, { recursive: true, force: true })
    }
  }
}

export async function transitionTask(ctx: AofContext, id: string, to: TaskStatus, options: TransitionOptions): Promise<Task> {
  return withTaskLock(ctx, id, () => {
    const task = readTaskLocked(ctx, id)
    if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found in ${ctx.dataDir}/tasks`)
    return moveTaskLocked(ctx, task, to, options)
  })
}

/** Read-modify-write of a task in place under its lock; `mutate` edits `data`/`body`, `updatedAt` moves forward. */
export async function updateTask(
  ctx: AofContext,
  id: string,
  mutate: (task: Task) => void,
): Promise<Task> {
  return withTaskLock(ctx, id, () => {
    const task = readTaskLocked(ctx, id)
    if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found in ${ctx.dataDir}/tasks`)
    return updateTaskLocked(ctx, task, mutate)
  })
}

export function updateTaskLocked(ctx: AofContext, task: Task, mutate: (task: Task) => void): Task {
  const copy: Task = { ...task, data: structuredClone(task.data) }
  mutate(copy)
  copy.data.updatedAt = nextStamp(task, ctx.now())
  writeFileAtomic(copy.path, renderTask(copy))
  return copy
}
