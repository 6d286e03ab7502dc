/**
 * Where an AOF operation works and what time it is. Every path under the data dir is built here, and only from a
 * validated task id and a known status, so no caller can steer a path outside the data dir.
 */

import { join } from 'node:path'
import { TeaError } from '../../../core/errors.ts'
import type { LockOptions } from './file-lock.ts'
import { isTaskId } from '../../protocol/task-id.ts'
import type { TaskStatus } from '../../protocol/status.ts'

export interface AofContext {
  dataDir: string
  now(): Date
  lock: LockOptions
}

export interface AofContextOptions {
  now?: () => Date
  lock?: LockOptions
}

export function aofContext(dataDir: string, options: AofContextOptions = {}): AofContext {
  return { dataDir, now: options.now ?? (() => new Date()), lock: options.lock ?? {} }
}

export function assertTaskId(id: string): void {
  if (!isTaskId(id)) {
    throw new TeaError(
      'AOF_INVALID',
      `expected a task id like TASK-2026-02-09-001 or TASK-2026-02-09-Ab3dEf7h, received ${JSON.stringify(id)}`,
    )
  }
}

export function tasksDir(ctx: AofContext): string {
  return join(ctx.dataDir, 'tasks')
}

export function statusDir(ctx: AofContext, status: TaskStatus): string {
  return join(ctx.dataDir, 'tasks', status)
}

export function taskFilePath(ctx: AofContext, status: TaskStatus, id: string): string {
  assertTaskId(id)
  return join(ctx.dataDir, 'tasks', status, `${id}.md`)
}

/** The companion folder `tasks/<status>/<ID>/` holding `inputs/ work/ outputs/`. */
export function taskDirPath(ctx: AofContext, status: TaskStatus, id: string): string {
  assertTaskId(id)
  return join(ctx.dataDir, 'tasks', status, id)
}

/**
 * `state/runs/<ID>/`: where the reference reads and writes run artifacts, so a run either side started is seen by
 * both (issue 15). Before that tea used `runs/<ID>/` (the BDD text's layout); see `legacyRunDirPath`.
 */
export function runDirPath(ctx: AofContext, id: string): string {
  assertTaskId(id)
  return join(ctx.dataDir, 'state', 'runs', id)
}

/** `runs/<ID>/`, tea's layout before issue 15: still read, and moved to `runDirPath` on the next write. */
export function legacyRunDirPath(ctx: AofContext, id: string): string {
  assertTaskId(id)
  return join(ctx.dataDir, 'runs', id)
}

export function eventsDir(ctx: AofContext): string {
  return join(ctx.dataDir, 'events')
}

export function lockPath(ctx: AofContext, name: string): string {
  return join(ctx.dataDir, 'locks', `${name}.lock`)
}
