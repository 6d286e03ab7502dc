/**
 * All-or-nothing for a step that writes several files under one task lock (a lease: run.json, the first
 * heartbeat, the task's move, the events). Each write that succeeded registers how to take it back; when a later
 * one fails, they are taken back newest first and the first failure is rethrown, so the caller sees an error and
 * the data dir as it was (issue 9, D7: a lease that failed after its first write left the task in progress with a
 * run.json and no heartbeat).
 *
 * This covers failures that throw (a full or read-only disk, a file in the way), not a crash between two writes:
 * that residue is what the store's readers already repair (task-store.ts) or the scheduler reclaims.
 */

import { existsSync, rmdirSync } from 'node:fs'
import { TeaError, errorMessage, isTeaError } from '../../../core/errors.ts'
import { errno, isNotRegular, readError, readRegular, remove, writeFileAtomic } from './fs-atomic.ts'

export class Rollback {
  private readonly steps: Array<() => void> = []

  /** Registers how to take back a write that has just succeeded. */
  add(undo: () => void): void {
    this.steps.push(undo)
  }

  /**
   * Writes `path` through `write`, first noting what it holds now, so that undoing restores that content — or
   * removes the file when there was none, or when what was there was no regular file (it was replaced).
   */
  replace(path: string, write: () => void): void {
    const before = snapshot(path)
    write()
    this.add(() => (before === undefined ? remove(path) : writeFileAtomic(path, before)))
  }

  /** Creates folder `path` through `create` when it is missing; undoing removes it again if it is still empty. */
  folder(path: string, create: () => void): void {
    const existed = existsSync(path)
    create()
    if (!existed) this.add(() => removeEmptyDir(path))
  }

  /** Takes every registered write back, newest first; the error to throw for `cause`. */
  undo(cause: unknown): unknown {
    const failures: string[] = []
    for (const step of this.steps.splice(0).reverse()) {
      try {
        step()
      } catch (e) {
        failures.push(errorMessage(e))
      }
    }
    if (failures.length === 0) return cause
    const code = isTeaError(cause) ? cause.code : 'STORE_ERROR'
    return new TeaError(code, `${errorMessage(cause)}; undoing the step's earlier writes failed too: ${failures.join('; ')}`, {
      cause,
      details: { rollbackFailed: failures },
      hint: "run 'tea aof lint' to see what was left behind",
    })
  }
}

/** Runs `fn`; when it throws, undoes the writes it registered and rethrows. */
export function allOrNothing<T>(fn: (rb: Rollback) => T): T {
  const rb = new Rollback()
  try {
    return fn(rb)
  } catch (e) {
    throw rb.undo(e)
  }
}

// --- internal ---

/** The text `path` holds now; undefined when it holds nothing (or nothing that can be restored: a FIFO, a link). */
function snapshot(path: string): string | undefined {
  try {
    return readRegular(path)
  } catch (e) {
    // A symlink or FIFO in the way is replaced by the write (rename does not follow it) and removed on undo.
    if (errno(e) === 'ENOENT' || isNotRegular(e)) return undefined
    throw readError(e, path, 'file')
  }
}

function removeEmptyDir(path: string): void {
  try {
    rmdirSync(path)
  } catch (e) {
    if (errno(e) !== 'ENOENT' && errno(e) !== 'ENOTEMPTY') throw e
  }
}
