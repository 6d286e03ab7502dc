/**
 * The filesystem store's `handoffInputs`: `inputs/handoff.json` in the task's companion folder, read only through
 * real folders and as a regular file.
 */

import { lstatSync } from 'node:fs'
import { join } from 'node:path'
import { handoffInputsOf } from '../../protocol/handoff.ts'
import type { Task } from '../../protocol/task-file.ts'
import { type AofContext, taskDirPath } from './context.ts'
import { errno, isNotRegular, readError, readRegular } from './fs-atomic.ts'

/** The filesystem store's `handoffInputs`: the parsed `inputs/handoff.json` of the task's companion folder, or `{}`. */
export function readHandoffInputs(ctx: AofContext, task: Task): Record<string, unknown> {
  const dir = taskDirPath(ctx, task.status, task.id)
  // The companion folder and its inputs/ must be real folders: a symlink there could hand the agent any file.
  if (!isRealDir(dir) || !isRealDir(join(dir, 'inputs'))) return {}
  let raw: string
  try {
    raw = readRegular(join(dir, 'inputs', 'handoff.json'))
  } catch (e) {
    // Absent, or not a regular file (a FIFO would block the worker; a symlink is not followed): no inputs.
    if (errno(e) === 'ENOENT' || isNotRegular(e)) return {}
    throw readError(e, join(dir, 'inputs', 'handoff.json'), 'handoff file')
  }
  return handoffInputsOf(raw)
}

function isRealDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory()
  } catch {
    return false
  }
}
