/**
 * Reading a task file from its folder: only a regular file is read (a symlink, a FIFO, a folder or a device in a
 * status folder is AOF_INVALID at its path without a byte read from it).
 */

import { parseTaskText, type Task } from '../../protocol/task-file.ts'
import type { TaskStatus } from '../../protocol/status.ts'
import { errno, readError, readRegular } from './fs-atomic.ts'

/**
 * Reads and parses one task file. Only a regular file is read: a symlink, a FIFO, a folder or a device in a status
 * folder is AOF_INVALID at its path without a byte read from it (so no error can quote what a link points to, and
 * no FIFO can block the process). ENOENT passes through as is: the file moved, which callers handle.
 */
export function readTaskFile(path: string, folderStatus: TaskStatus, expectedId: string): Task {
  return parseTaskText(readTaskText(path), path, folderStatus, expectedId)
}

/** The text of a task file, read under the same rule (for printing it as it is: `tea aof task show`). */
export function readTaskText(path: string): string {
  try {
    return readRegular(path)
  } catch (e) {
    if (errno(e) === 'ENOENT') throw e
    throw readError(e, path, 'task file')
  }
}
