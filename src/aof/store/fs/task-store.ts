/**
 * The task store: Markdown files in status folders (SPEC §3.9). Every mutation of a task happens under that
 * task's cross-process file lock (`locks/<ID>.lock`), re-reading the file inside the lock, so two processes never
 * lose each other's updates.
 *
 * Finding a task (`getTask`) without the lock probes the eight status folders. Because a transition writes the new
 * file before it deletes the old one, a task is never absent from disk — but a lock-free probe can still miss it
 * (the file moves from a folder not yet probed to one already probed) or see it twice. In both cases the reader
 * takes the lock and probes again: with the lock held no transition is in flight, so "none" is definitive and
 * "two" is the residue of a crash mid-transition, which `resolveCopies` repairs: the copy with the latest
 * `updatedAt` wins (every rewrite moves it strictly forward), ties go to the copy the other could have moved to,
 * then to the later status in the table's order; the losers are deleted and the companion folder follows the
 * winner.
 */

import { existsSync, lstatSync, readdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { errorIssue, isTeaError } from '../../../core/errors.ts'
import { type AofContext, assertTaskId, lockPath, statusDir, taskDirPath, taskFilePath } from './context.ts'
import { appendEvent } from './event-log.ts'
import { withFileLock } from './file-lock.ts'
import { errno, mkdirs, remove, writeError } from './fs-atomic.ts'
import { TASK_STATUSES, type TaskStatus, isValidTransition } from '../../protocol/status.ts'
import { type Task, renderTask } from '../../protocol/task-file.ts'
import { readTaskFile } from './read-task.ts'
import { isTaskId } from '../../protocol/task-id.ts'
import type { TaskListing } from '../port.ts'

export async function withTaskLock<T>(ctx: AofContext, id: string, fn: () => Promise<T> | T): Promise<T> {
  assertTaskId(id)
  return withFileLock(lockPath(ctx, id), ctx.lock, fn)
}

/**
 * The folders holding an entry named `<id>.md`. lstat, not stat: a symlink or a FIFO there is present (and refused
 * when read, with its path), not silently absent.
 */
function probe(ctx: AofContext, id: string): TaskStatus[] {
  return TASK_STATUSES.filter((s) => present(taskFilePath(ctx, s, id)))
}

function present(path: string): boolean {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

/** The task, or undefined when it does not exist. Throws AOF_INVALID when its file cannot be parsed. */
export async function getTask(ctx: AofContext, id: string): Promise<Task | undefined> {
  assertTaskId(id)
  const found = probe(ctx, id)
  if (found.length === 1) {
    try {
      return readTaskFile(taskFilePath(ctx, found[0]!, id), found[0]!, id)
    } catch (e) {
      if (errno(e) !== 'ENOENT') throw e
    }
  }
  try {
    return await withTaskLock(ctx, id, () => readTaskLocked(ctx, id))
  } catch (e) {
    // A read-only data dir cannot hold a lock file, but nothing can move a task there either: the lock-free
    // probe is exact. (Reading must work on a read-only data dir; only writers report STORE_NOT_WRITABLE.)
    if (isTeaError(e, 'STORE_NOT_WRITABLE') && e.details?.errno === 'EROFS') return peekTask(ctx, id)
    throw e
  }
}

/** Reads a task while its lock is held; repairs crash residue (two copies). */
export function readTaskLocked(ctx: AofContext, id: string): Task | undefined {
  const found = probe(ctx, id)
  if (found.length === 0) return undefined
  if (found.length === 1) return readTaskFile(taskFilePath(ctx, found[0]!, id), found[0]!, id)
  return resolveCopies(ctx, id, found, true)
}

/**
 * A best-effort read without the task's lock and without repairs (for reading a second task while holding the
 * first one's lock). It may miss a task in mid-move; callers treat that as "not found now".
 */
export function peekTask(ctx: AofContext, id: string): Task | undefined {
  const found = probe(ctx, id)
  if (found.length === 0) return undefined
  try {
    return found.length === 1 ? readTaskFile(taskFilePath(ctx, found[0]!, id), found[0]!, id) : resolveCopies(ctx, id, found, false)
  } catch (e) {
    if (errno(e) === 'ENOENT') return peekTask(ctx, id)
    throw e
  }
}

function resolveCopies(ctx: AofContext, id: string, found: TaskStatus[], repair: boolean): Task {
  const copies: Task[] = []
  for (const s of found) {
    try {
      copies.push(readTaskFile(taskFilePath(ctx, s, id), s, id))
    } catch {
      // An unreadable copy never wins over a readable one; lint will still report it if it is the only one.
    }
  }
  if (copies.length === 0) return readTaskFile(taskFilePath(ctx, found[0]!, id), found[0]!, id)
  const stamp = (t: Task): number => Date.parse(String(t.data.updatedAt)) || 0
  copies.sort((a, b) => {
    if (stamp(a) !== stamp(b)) return stamp(b) - stamp(a)
    if (isValidTransition(a.status, b.status)) return 1
    if (isValidTransition(b.status, a.status)) return -1
    return TASK_STATUSES.indexOf(b.status) - TASK_STATUSES.indexOf(a.status)
  })
  const winner = copies[0]!
  if (!repair) return winner
  const winnerDir = taskDirPath(ctx, winner.status, id)
  for (const s of found) {
    if (s === winner.status) continue
    const loserDir = taskDirPath(ctx, s, id)
    if (!existsSync(winnerDir) && existsSync(loserDir)) {
      try {
        renameSync(loserDir, winnerDir)
      } catch (e) {
        throw writeError(e, winnerDir)
      }
    }
    remove(taskFilePath(ctx, s, id))
  }
  appendEvent(ctx, {
    type: 'task.duplicate_resolved',
    actor: 'tea',
    taskId: id,
    payload: { kept: winner.status, removed: found.filter((s) => s !== winner.status) },
  })
  return winner
}

export function ensureTaskDirs(ctx: AofContext, status: TaskStatus, id: string): string {
  const dir = taskDirPath(ctx, status, id)
  for (const sub of ['inputs', 'work', 'outputs']) mkdirs(join(dir, sub))
  return dir
}

/** Task ids present in one status folder (by file name; no parsing). */
export function idsIn(ctx: AofContext, status: TaskStatus): string[] {
  try {
    return readdirSync(statusDir(ctx, status))
      .filter((f) => f.endsWith('.md') && isTaskId(f.slice(0, -3)))
      .map((f) => f.slice(0, -3))
      .sort()
  } catch (e) {
    if (errno(e) === 'ENOENT') return []
    throw e
  }
}

export function listTasks(ctx: AofContext, statuses: readonly TaskStatus[] = TASK_STATUSES): TaskListing {
  const tasks: Task[] = []
  const problems: TaskListing['problems'] = []
  for (const status of statuses) {
    for (const id of idsIn(ctx, status)) {
      const path = taskFilePath(ctx, status, id)
      try {
        tasks.push(readTaskFile(path, status, id))
      } catch (e) {
        // A file that moved away between readdir and read is not a problem; it will be listed where it went.
        if (errno(e) === 'ENOENT') continue
        const issue = errorIssue(e)
        problems.push({ ...issue, where: { ...issue.where, file: path } })
      }
    }
  }
  return { tasks, problems }
}
