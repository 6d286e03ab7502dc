/**
 * Session end: for every in-progress task whose `run_result.json` belongs to its current run (and that run is
 * still running), apply the outcome's transitions and complete the run. Tasks without a result, or with a result
 * from an earlier run, are left alone and nothing is logged for them (the reference applied any result it found,
 * including one left by an earlier run). A result from an earlier run beside a live run is moved to
 * `previous_run_result.json`, where the reference's session end cannot apply it either.
 */

import { applyOutcomeLocked, outcomeReason } from '../../protocol/outcome.ts'
import type { AofContext } from './context.ts'
import { completeRunArtifact, readRun, readRunResult, resultBelongsToRun, setAsideRunResult } from './run-artifacts.ts'
import type { RunArtifact, RunResult } from '../../protocol/schemas/run.ts'
import type { SessionEndEntry } from '../port.ts'
import { idsIn, readTaskLocked, withTaskLock } from './task-store.ts'

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
      if (setAsideIfStale(ctx, id, result, run)) return undefined
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
