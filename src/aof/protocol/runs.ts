/**
 * The rules of run artifacts, the same on every store: which run a result belongs to, the one `RunResult` a
 * completion report becomes, and a run marked completed or expired. Every run tea starts has a `runId` (in the run,
 * its heartbeats and its result), so an earlier run's result is never applied to a later run.
 */

import type { CompletionReportEnvelope } from './schemas/envelope.ts'
import type { RunArtifact, RunResult } from './schemas/run.ts'

/**
 * Whether `result` was produced by `run`. With run ids on both sides they must match; a result without one
 * (written by the reference implementation) counts only if it was completed after the run started.
 */
export function resultBelongsToRun(result: RunResult, run: RunArtifact | undefined): boolean {
  if (!run) return result.runId === undefined
  if (result.runId !== undefined || run.runId !== undefined) return result.runId === run.runId
  return Date.parse(result.completedAt) >= Date.parse(run.startedAt)
}

/** The `run_result.json` a completion report writes, tagged with the run it reports on. */
export function runResultOf(env: CompletionReportEnvelope, runId: string | undefined): RunResult {
  const p = env.payload
  return {
    taskId: env.taskId,
    agentId: env.fromAgent,
    ...(runId ? { runId } : {}),
    completedAt: new Date(env.sentAt).toISOString(),
    outcome: p.outcome,
    summaryRef: p.summaryRef,
    // Required by the reference's RunResult schema: without it the reference cannot read our result.
    handoffRef: 'outputs/handoff.md',
    deliverables: p.deliverables,
    tests: p.tests,
    blockers: p.blockers,
    notes: p.notes,
  }
}

/** `run` completed at `at`. */
export function completedRun(run: RunArtifact, at: Date): RunArtifact {
  return { ...run, status: 'completed', metadata: { ...run.metadata, completedAt: at.toISOString() } }
}

/** `run` given up by the scheduler at `at` (`stale_heartbeat`, `lease_expired`). */
export function expiredRun(run: RunArtifact, at: Date, reason: string): RunArtifact {
  return { ...run, status: 'failed', metadata: { ...run.metadata, expiredAt: at.toISOString(), expiredReason: reason } }
}
