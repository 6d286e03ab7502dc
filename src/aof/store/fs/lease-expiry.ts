/**
 * The scheduler's second recovery: an in-progress task with no heartbeat file (so the stale-heartbeat pass never
 * sees it) whose lease has expired goes back to `ready` and its run is marked expired (`lease_expired`), as the
 * reference's expired-lease pass does. A task with a heartbeat is left to the heartbeat pass, whose heartbeat
 * beats also extend the lease.
 */

import { type AofContext, taskFilePath } from './context.ts'
import type { SchedulerAction } from '../../protocol/poll-result.ts'
import { markRunArtifactExpired, readHeartbeat, readRun } from './run-artifacts.ts'
import { taskLease } from '../../protocol/task-file.ts'
import { readTaskFile } from './read-task.ts'
import { idsIn, readTaskLocked, withTaskLock } from './task-store.ts'
import { moveTaskLocked } from './task-transition.ts'

export interface ExpiredLease {
  taskId: string
  agentId: string
  /** The run the lease was for (run.json), when there is one. */
  runId?: string
  expiresAt: string
}

export function checkExpiredLeases(ctx: AofContext): ExpiredLease[] {
  const now = ctx.now().getTime()
  const out: ExpiredLease[] = []
  for (const id of idsIn(ctx, 'in-progress')) {
    if (readHeartbeat(ctx, id)) continue
    let lease
    try {
      lease = taskLease(readTaskFile(taskFilePath(ctx, 'in-progress', id), 'in-progress', id))
    } catch {
      continue // moved away or unreadable: lint reports the latter
    }
    if (lease && Date.parse(lease.expiresAt) <= now) {
      const runId = readRun(ctx, id)?.runId
      out.push({ taskId: id, agentId: lease.agent, ...(runId ? { runId } : {}), expiresAt: lease.expiresAt })
    }
  }
  return out
}

export async function reclaimExpiredLease(
  ctx: AofContext,
  e: ExpiredLease,
): Promise<Pick<SchedulerAction, 'resolution' | 'skipReason' | 'transitions'>> {
  return withTaskLock(ctx, e.taskId, () => {
    const task = readTaskLocked(ctx, e.taskId)
    if (!task || task.status !== 'in-progress') return { resolution: 'skipped' as const, skipReason: 'no_longer_in_progress' }
    const lease = taskLease(task)
    if (!lease || lease.agent !== e.agentId || Date.parse(lease.expiresAt) > ctx.now().getTime()) {
      return { resolution: 'skipped' as const, skipReason: 'lease_renewed' }
    }
    if (readHeartbeat(ctx, e.taskId)) return { resolution: 'skipped' as const, skipReason: 'heartbeat_appeared' }
    moveTaskLocked(ctx, task, 'ready', { actor: 'scheduler', reason: 'lease_expired' })
    markRunArtifactExpired(ctx, e.taskId, 'lease_expired')
    return { resolution: 'reclaimed' as const, transitions: [{ from: 'in-progress', to: 'ready' }] }
  })
}
