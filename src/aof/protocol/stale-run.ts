/**
 * The scheduler's rules for one in-progress task, as values (store/shared.ts `schedulerPass` applies them on any
 * store). A run is stale when its heartbeat expired — a heartbeat of the *current* run: one of an earlier run (a late
 * beat of a reclaimed worker) says nothing about this one, so its lease decides instead — or, with no heartbeat of
 * the current run, when its lease expired. A stale run that wrote its own result (the worker died between the result
 * and the move) has that result applied (`stale_heartbeat_<outcome>`); otherwise the task goes back to `ready`
 * (`stale_heartbeat_reclaim` / `lease_expired`) and its run is marked failed. A result of an earlier run beside a
 * live run is never applied, and is set aside so that the reference's session end, which applies whatever result it
 * finds, cannot either.
 */

import { heartbeatExpiry } from './lease.ts'
import type { SchedulerAction } from './poll-result.ts'
import { resultBelongsToRun } from './runs.ts'
import type { RunArtifact, RunHeartbeat, RunResult } from './schemas/run.ts'
import { type Task, taskLease } from './task-file.ts'

/** A stale run found: what the scheduler reports (before it acts), and what decided it. */
export interface StaleRun {
  action: SchedulerAction
  /** Decided by the run's heartbeat (else by its lease). */
  byHeartbeat: boolean
}

/** The heartbeat if it belongs to the current run (or either says no run). */
export function heartbeatOfRun(hb: RunHeartbeat | undefined, run: RunArtifact | undefined): RunHeartbeat | undefined {
  if (!hb || !run || hb.runId === undefined || run.runId === undefined) return hb
  return hb.runId === run.runId ? hb : undefined
}

/** The in-progress `task`'s run if it is stale at `now` (ms), else undefined. */
export function staleRun(
  task: Task,
  run: RunArtifact | undefined,
  heartbeat: RunHeartbeat | undefined,
  now: number,
  ttlMs: number,
): StaleRun | undefined {
  if (task.status !== 'in-progress') return undefined
  const hb = heartbeatOfRun(heartbeat, run)
  const lease = taskLease(task)
  const expiry = hb ? heartbeatExpiry(hb, ttlMs) : lease ? Date.parse(lease.expiresAt) : Number.POSITIVE_INFINITY
  if (expiry > now) return undefined
  const runId = run?.runId ?? hb?.runId
  const action: SchedulerAction = {
    type: hb ? 'stale_heartbeat' : 'expired_lease',
    taskId: task.id,
    agentId: hb?.agentId ?? lease?.agent ?? run?.agentId ?? '',
    ...(runId ? { runId } : {}),
  }
  return { action, byHeartbeat: hb !== undefined }
}

/** The result the scheduler applies for a stale run: the run's own, written while it was running (or, with no run file, one naming no run). */
export function resultToApply(run: RunArtifact | undefined, result: RunResult | undefined): RunResult | undefined {
  return result && resultBelongsToRun(result, run) && (!run || run.status === 'running') ? result : undefined
}

/** The reason of each move when the scheduler applies a stale run's result. */
export function staleOutcomeReason(result: RunResult): string {
  const blockers = result.outcome === 'blocked' && result.blockers.length ? `: ${result.blockers.join('; ')}` : ''
  return `stale_heartbeat_${result.outcome}${blockers}`
}

/** Whether `result` is an earlier run's, found beside the live `run`: to be set aside. */
export function isEarlierRunResult(result: RunResult, run: RunArtifact | undefined): boolean {
  return run?.status === 'running' && !resultBelongsToRun(result, run)
}

/** An event id that is the same whoever applies run `runId`'s outcome (roles/worker-report.ts names them so too). */
export function outcomeEventId(taskId: string, runId: string | undefined, what: string): string {
  return `outcome-${taskId}-${runId ?? 'norun'}-${what}`
}
