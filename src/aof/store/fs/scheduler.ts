/**
 * The filesystem store's scheduler pass (`tea aof poll`; the port's `poll`): finds in-progress tasks whose heartbeat has expired and
 * recovers each one. A heartbeat is stale when its `expiresAt` (else `lastHeartbeat + heartbeatTtlMs`) is at or
 * before now; a task without a heartbeat file is never stale. Recovery re-checks everything under the task's lock
 * (still in-progress, same agent, same run, still stale), then either applies the run's own result — only if it
 * belongs to the current run — with reasons `stale_heartbeat_<outcome>`, or reclaims the task to `ready`
 * (`stale_heartbeat_reclaim`) and marks the run failed/expired. Recovery actions are not dispatch actions and do
 * not count in `actionsExecuted`. A second pass (lease-expiry.ts) reclaims in-progress tasks that have no heartbeat
 * file and an expired lease.
 */

import { DEFAULT_HEARTBEAT_TTL_MS, heartbeatExpiry } from '../../protocol/lease.ts'
import type { PollOptions, PollResult, SchedulerAction, StaleHeartbeat } from '../../protocol/poll-result.ts'
import { resultBelongsToRun } from '../../protocol/runs.ts'
import type { RunArtifact, RunResult } from '../../protocol/schemas/run.ts'
import { TASK_STATUSES } from '../../protocol/status.ts'
import { taskLease } from '../../protocol/task-file.ts'
import { checkTtlMs, ttlOption } from '../../protocol/ttl.ts'
import type { AofContext } from './context.ts'
import { appendEvent } from './event-log.ts'
import { checkExpiredLeases, reclaimExpiredLease } from './lease-expiry.ts'
import { completeRunArtifact, markRunArtifactExpired, readHeartbeat, readRun, readRunResult, setAsideRunResult } from './run-artifacts.ts'
import { idsIn, readTaskLocked, withTaskLock } from './task-store.ts'
import { applyOutcomeLocked, moveTaskLocked } from './task-transition.ts'

export function checkStaleHeartbeats(ctx: AofContext, ttlMs = DEFAULT_HEARTBEAT_TTL_MS): StaleHeartbeat[] {
  checkTtlMs('heartbeatTtlMs', ttlMs)
  const now = ctx.now().getTime()
  const out: StaleHeartbeat[] = []
  for (const id of idsIn(ctx, 'in-progress')) {
    const hb = readHeartbeat(ctx, id)
    if (!hb) continue
    const expiry = heartbeatExpiry(hb, ttlMs)
    if (expiry <= now) {
      out.push({ taskId: id, agentId: hb.agentId, ...(hb.runId ? { runId: hb.runId } : {}), expiresAt: new Date(expiry).toISOString() })
    }
  }
  return out
}

export async function poll(ctx: AofContext, options: PollOptions = {}): Promise<PollResult> {
  const dryRun = options.dryRun ?? false
  const ttlMs = ttlOption('heartbeatTtlMs', options.heartbeatTtlMs, DEFAULT_HEARTBEAT_TTL_MS)
  const stale = checkStaleHeartbeats(ctx, ttlMs)
  const actions: SchedulerAction[] = []
  for (const s of stale) {
    const action: SchedulerAction = {
      type: 'stale_heartbeat',
      taskId: s.taskId,
      agentId: s.agentId,
      ...(s.runId ? { runId: s.runId } : {}),
    }
    if (!dryRun) Object.assign(action, await recoverStale(ctx, s, ttlMs))
    actions.push(action)
  }
  const expired = checkExpiredLeases(ctx)
  for (const e of expired) {
    const action: SchedulerAction = { type: 'expired_lease', taskId: e.taskId, agentId: e.agentId, ...(e.runId ? { runId: e.runId } : {}) }
    if (!dryRun) Object.assign(action, await reclaimExpiredLease(ctx, e))
    actions.push(action)
  }
  // Results of earlier runs beside live runs: never applied by us, but the reference's session end would apply them.
  const setAside = dryRun ? [] : await setAsideStaleResults(ctx)
  const result: PollResult = {
    dryRun,
    now: ctx.now().toISOString(),
    // Every task listed, in every status, as the reference counts them (not the in-progress ones left after recovery).
    tasksEvaluated: TASK_STATUSES.reduce((n, s) => n + idsIn(ctx, s).length, 0),
    actions,
    actionsPlanned: actions.length,
    actionsExecuted: 0,
    staleHeartbeats: stale.length,
    leasesExpired: expired.length,
    ...(setAside.length ? { resultsSetAside: setAside } : {}),
  }
  appendEvent(ctx, {
    type: 'scheduler.poll',
    actor: 'scheduler',
    payload: {
      dryRun,
      tasksEvaluated: result.tasksEvaluated,
      actionsPlanned: result.actionsPlanned,
      actionsExecuted: 0,
      staleHeartbeats: stale.length,
      leasesExpired: expired.length,
    },
  })
  return result
}

async function recoverStale(ctx: AofContext, s: StaleHeartbeat, ttlMs: number): Promise<Partial<SchedulerAction>> {
  return withTaskLock(ctx, s.taskId, () => {
    const task = readTaskLocked(ctx, s.taskId)
    const hb = readHeartbeat(ctx, s.taskId)
    const run = readRun(ctx, s.taskId)
    const skip = (why: string): Partial<SchedulerAction> => ({ resolution: 'skipped', skipReason: why })
    if (!task || task.status !== 'in-progress') return skip('no_longer_in_progress')
    if (!hb || hb.runId !== s.runId || heartbeatExpiry(hb, ttlMs) > ctx.now().getTime()) return skip('heartbeat_refreshed')
    const lease = taskLease(task)
    if (lease && lease.agent !== hb.agentId) return skip('lease_changed')
    if (run && hb.runId !== undefined && run.runId !== hb.runId) return skip('run_changed')

    const result = readRunResult(ctx, s.taskId)
    if (result && resultBelongsToRun(result, run)) {
      const reason = `stale_heartbeat_${result.outcome}${result.outcome === 'blocked' && result.blockers.length ? `: ${result.blockers.join('; ')}` : ''}`
      const applied = applyOutcomeLocked(ctx, task, result.outcome, 'scheduler', reason)
      completeRunArtifact(ctx, s.taskId)
      // The run's completion, as its own report would have logged it: one `task.completed` per run, whoever applies
      // the result (the NATS scheduler logs it too).
      appendEvent(ctx, {
        type: 'task.completed',
        actor: result.agentId,
        taskId: s.taskId,
        payload: { outcome: result.outcome, ...(result.runId ? { runId: result.runId } : {}) },
      })
      return { resolution: 'applied_result', outcome: result.outcome, transitions: applied.applied }
    }
    moveTaskLocked(ctx, task, 'ready', { actor: 'scheduler', reason: 'stale_heartbeat_reclaim' })
    markRunArtifactExpired(ctx, s.taskId, 'stale_heartbeat')
    return { resolution: 'reclaimed', transitions: [{ from: 'in-progress', to: 'ready' }] }
  })
}

/**
 * Puts aside an earlier run's result found next to a live run (the reference leases without clearing it), so the
 * reference's own session end, which applies whatever it finds, cannot send this run to that outcome. Called under
 * the task lock; true when it did.
 */
export function setAsideIfStale(ctx: AofContext, id: string, result: RunResult, run: RunArtifact | undefined): boolean {
  if (!run || run.status !== 'running' || resultBelongsToRun(result, run)) return false
  setAsideRunResult(ctx, id)
  return true
}

/** `setAsideIfStale` for every in-progress task (tea's poll runs it, so a board protects the reference's runs too). */
export async function setAsideStaleResults(ctx: AofContext): Promise<string[]> {
  const out: string[] = []
  for (const id of idsIn(ctx, 'in-progress')) {
    if (!readRunResult(ctx, id)) continue
    const done = await withTaskLock(ctx, id, () => {
      const result = readRunResult(ctx, id)
      return result !== undefined && readTaskLocked(ctx, id)?.status === 'in-progress' && setAsideIfStale(ctx, id, result, readRun(ctx, id))
    })
    if (done) out.push(id)
  }
  return out
}
