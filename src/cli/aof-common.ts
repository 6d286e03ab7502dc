/** What the `tea aof …` commands share: the AOF context of the data dir, task ids and `--now`, JSON output. */

import { TeaError } from '../core/errors.ts'
import { type AofContext, aofContext, isTaskId } from '../aof/index.ts'
import { dataDirOf } from './data-dir.ts'
import type { Io } from './io.ts'

export function contextOf(flag: string | undefined, io: Io, now?: Date): AofContext {
  return aofContext(dataDirOf(flag, io), now ? { now: () => now } : {})
}

/** `id` if it has the form of a task id; a usage error otherwise (it also keeps `../` out of paths). */
export function requireTaskId(id: string, what = 'a task id'): string {
  if (!isTaskId(id))
    throw new TeaError('USAGE', `expected ${what} like TASK-2026-02-09-001 or TASK-2026-02-09-Ab3dEf7h, got ${JSON.stringify(id)}`)
  return id
}

export function parseNow(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const t = Date.parse(value)
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    throw new TeaError('USAGE', `--now expects an ISO 8601 date-time such as 2026-02-10T10:05:00.000Z, got ${JSON.stringify(value)}`)
  }
  return new Date(t)
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}
