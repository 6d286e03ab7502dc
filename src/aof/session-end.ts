/**
 * Session end: for every in-progress task whose `run_result.json` belongs to its current run (and that run is
 * still running), apply the outcome's transitions and complete the run. Tasks without a result, or with a result
 * from an earlier run, are left alone and nothing is logged for them (the reference applied any result it found,
 * including one left by an earlier run).
 */

import { applyOutcomeLocked, outcomeReason } from './completion-outcome.ts'
import type { AofContext } from './context.ts'
import { completeRunArtifact, readRun, readRunResult, resultBelongsToRun } from './run-artifacts.ts'
import type { TaskStatus } from './status.ts'
import { idsIn, readTaskLocked, withTaskLock } from './task-store.ts'

export interface SessionEndEntry {
  taskId: string
  outcome: string
  transitions: Array<{ from: TaskStatus; to: TaskStatus }>
}

export async function handleSessionEnd(ctx: AofContext): Promise<SessionEndEntry[]> {
  const out: SessionEndEntry[] = []
  for (const id of idsIn(ctx, 'in-progress')) {
    // Cheap check before the lock: most in-progress tasks have no result yet.
    if (!readRunResult(ctx, id)) continue
    const entry = await withTaskLock(ctx, id, () => {
      const task = readTaskLocked(ctx, id)
      const result = readRunResult(ctx, id)
      const run = readRun(ctx, id)
      if (!task || task.status !== 'in-progress' || !result) return undefined
      if (!resultBelongsToRun(result, run) || (run && run.status !== 'running')) return undefined
      const applied = applyOutcomeLocked(
        ctx,
        task,
        result.outcome,
        result.agentId,
        outcomeReason(result.outcome, result.blockers, result.notes),
      )
      completeRunArtifact(ctx, id)
      return { taskId: id, outcome: result.outcome, transitions: applied.applied }
    })
    if (entry) out.push(entry)
  }
  return out
}
