/**
 * Moving a task between status folders, crash-safely (lock held by the caller):
 *   1. write the updated file into the target folder (temp file + rename: complete or absent),
 *   2. rename the companion folder `<ID>/` along,
 *   3. log `task.transitioned` (the commit point: a failure up to here undoes 1 and 2, so the task stays where it
 *      was and nothing says it moved),
 *   4. delete the old file.
 * A crash after 1, 2 or 3 leaves two copies, which the next reader repairs (task-store.ts: the newer one wins); a
 * crash before 1 leaves the task untouched. Never zero copies. A caller with more to write in the same step (a
 * lease: run.json and the first heartbeat) stages the move (`stageMove`), does its writes, logs every event in one
 * append and only then commits; a failure anywhere undoes the lot. The lease is cleared whenever the task leaves
 * `in-progress` (the reference kept it on review/blocked, which its own lint then flagged).
 */

import { cpSync, existsSync, renameSync } from 'node:fs'
import { TeaError } from '../../../core/errors.ts'
import { type AofContext, taskDirPath, taskFilePath } from './context.ts'
import type { EventInput } from '../../protocol/events.ts'
import { appendEvents } from './event-log.ts'
import { errno, remove, writeError, writeFileAtomic } from './fs-atomic.ts'
import type { TaskStatus } from '../../protocol/status.ts'
import { type TransitionOptions, moved, transitionEvent } from '../../protocol/transition.ts'
import { type Task, nextStamp, renderTask } from '../../protocol/task-file.ts'
import { readTaskLocked, withTaskLock } from './task-store.ts'

export function moveTaskLocked(ctx: AofContext, task: Task, to: TaskStatus, options: TransitionOptions): Task {
  if (task.status === to) return task
  const staged = stageMove(ctx, task, to, options)
  try {
    appendEvents(ctx, [staged.event])
  } catch (e) {
    staged.undo()
    throw e
  }
  staged.commit()
  return staged.moved
}

/** A move written but not committed: the new copy is in place, the old one still exists. */
export interface StagedMove {
  moved: Task
  /** The `task.transitioned` event to log with the commit. */
  event: EventInput
  /** Takes the new copy back (the old one was never touched). */
  undo(): void
  /** Deletes the old copy. */
  commit(): void
}

/** Steps 1 and 2 of a move; all or nothing (a failure in 2 removes the copy written in 1). */
export function stageMove(ctx: AofContext, task: Task, to: TaskStatus, options: TransitionOptions): StagedMove {
  const next: Task = { ...moved(task, to, ctx.now(), options), path: taskFilePath(ctx, to, task.id) }
  const fromDir = taskDirPath(ctx, task.status, task.id)
  const toDir = taskDirPath(ctx, to, task.id)

  writeFileAtomic(next.path, renderTask(next))
  let companionMoved: boolean
  try {
    companionMoved = moveCompanion(fromDir, toDir)
  } catch (e) {
    remove(next.path)
    throw e
  }
  return {
    moved: next,
    event: transitionEvent(task, to, options),
    undo() {
      if (companionMoved) rename(toDir, fromDir)
      remove(next.path)
    },
    commit() {
      try {
        remove(task.path)
      } catch {
        // The move is logged and the new copy is the newer one: a leftover old copy is the same residue a crash
        // leaves here, and the next reader under the lock repairs it.
      }
    },
  }
}

/** Renames the companion folder along; false when there was none to move. */
function moveCompanion(from: string, to: string): boolean {
  try {
    renameSync(from, to)
    return true
  } catch (e) {
    if (errno(e) === 'ENOENT') return false
    if (errno(e) !== 'ENOTEMPTY' && errno(e) !== 'EEXIST') throw writeError(e, to)
    // A companion folder is already at the target (left by an earlier crash): merge, keeping the newer files.
    if (!existsSync(from)) return false
    try {
      cpSync(from, to, { recursive: true, force: true })
    } catch (err) {
      throw writeError(err, to)
    }
    remove(from, true)
    return true
  }
}

function rename(from: string, to: string): void {
  try {
    renameSync(from, to)
  } catch (e) {
    throw writeError(e, to)
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
export async function updateTask(ctx: AofContext, id: string, mutate: (task: Task) => void): Promise<Task> {
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
