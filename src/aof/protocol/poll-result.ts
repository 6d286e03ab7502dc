/**
 * What the scheduler's pass (`tea aof poll`) takes and says, on either store (roles/scheduler-pass.ts
 * `schedulerPass`). Types only.
 */
import type { TaskStatus } from './status.ts'

export interface PollOptions {
  dryRun?: boolean
  heartbeatTtlMs?: number
}

export interface StaleHeartbeat {
  taskId: string
  agentId: string
  runId?: string
  expiresAt: string
}

export interface SchedulerAction {
  type: 'stale_heartbeat' | 'expired_lease'
  taskId: string
  agentId: string
  runId?: string
  /** What was (or, in a dry run, would be) done. */
  resolution?: 'reclaimed' | 'applied_result' | 'skipped'
  outcome?: string
  transitions?: Array<{ from: TaskStatus; to: TaskStatus }>
  skipReason?: string
}

export interface PollResult {
  dryRun: boolean
  now: string
  tasksEvaluated: number
  actions: SchedulerAction[]
  actionsPlanned: number
  actionsExecuted: number
  staleHeartbeats: number
  leasesExpired: number
  /** Tasks whose earlier run's result was moved to previous_run_result.json (absent when none). */
  resultsSetAside?: string[]
}
