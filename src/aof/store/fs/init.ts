/**
 * `tea aof init`: the folder skeleton. Idempotent; never touches existing files, except that tea's old `runs/<ID>/`
 * folders are moved to `state/runs/<ID>/`, where both implementations read them.
 */

import { join } from 'node:path'
import { type AofContext, eventsDir, statusDir } from './context.ts'
import { mkdirs } from './fs-atomic.ts'
import { migrateRunDirs } from './run-artifacts.ts'
import { TASK_STATUSES } from '../../protocol/status.ts'

export function initDataDir(ctx: AofContext): string[] {
  const dirs = [
    ...TASK_STATUSES.map((s) => statusDir(ctx, s)),
    join(ctx.dataDir, 'state', 'runs'),
    eventsDir(ctx),
    join(ctx.dataDir, 'locks'),
  ]
  for (const d of dirs) mkdirs(d)
  migrateRunDirs(ctx)
  return dirs
}
