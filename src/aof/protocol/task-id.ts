/**
 * Task ids, in AOF's two shapes: the legacy `TASK-YYYY-MM-DD-NNN` (optionally `-NN`) and the current
 * `TASK-YYYY-MM-DD-XXXXXXXX` (8 characters from a 56-letter alphabet without look-alikes). Every id that reaches the
 * filesystem is checked against this pattern first, so an id can never carry a path separator or `..`.
 */

import { randomBytes } from 'node:crypto'

export const TASK_ID_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

export const TASK_ID_PATTERN =
  /^TASK-\d{4}-\d{2}-\d{2}-(?:\d{3}(?:-\d{2})?|[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{8})$/

export type TaskId = string

export function isTaskId(value: unknown): value is TaskId {
  return typeof value === 'string' && TASK_ID_PATTERN.test(value)
}

/** A fresh id for `now` (UTC date). Uniqueness across processes is enforced by the store, not by chance alone. */
export function newTaskId(now: Date): TaskId {
  const bytes = randomBytes(8)
  let suffix = ''
  // 256 % 56 leaves a small bias; irrelevant here, the store re-draws on a clash.
  for (const b of bytes) suffix += TASK_ID_ALPHABET[b % TASK_ID_ALPHABET.length]!
  return `TASK-${now.toISOString().slice(0, 10)}-${suffix}`
}
