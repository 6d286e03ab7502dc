/**
 * Session end (`tea aof session-end`), one rule on every store: for every in-progress task whose run result
 * belongs to its current, still running run, apply the outcome and complete the run — one unit of work per task,
 * so on NATS a task that moved meanwhile is decided again on its new version. An earlier run's result found beside
 * a live run is set aside as `previous_run_result.json`, as on the filesystem.
 */

import { outcomeReason } from '../protocol/outcome.ts'
import { resultBelongsToRun } from '../protocol/runs.ts'
import type { TaskStatus } from '../protocol/status.ts'
import type { TaskStore } from '../store/port.ts'
import { applyOutcome } from './apply-outcome.ts'
import { completeRunOn, readRunResultOn, setAsideRunResultOn } from './run-files.ts'

/** What session end did to one task: the outcome of its run's result and the moves it made. */
export interface SessionEndEntry {
  taskId: string
  outcome: string
  transitions: Array<{ from: TaskStatus; to: TaskStatus }>
}

export async function sessionEnd(store: TaskStore): Promise<SessionEndEntry[]> {
  const out: SessionEndEntry[] = []
  const { tasks } = await store.list(['in-progress'])
  for (const listed of tasks) {
    if (!(await readRunResultOn(store, listed.id))) continue
    const entry = await store.withTask(listed.id, async (unit) => {
      const result = await readRunResultOn(store, listed.id)
      if (!unit || unit.task.status !== 'in-progress' || !result) return undefined
      const run = await store.readRun(listed.id)
      if (run && run.status === 'running' && !resultBelongsToRun(result, run)) {
        await setAsideRunResultOn(store, listed.id)
        return undefined
      }
      if (!resultBelongsToRun(result, run) || (run && run.status !== 'running')) return undefined
      const reason = outcomeReason(result.outcome, result.blockers, result.notes)
      const applied = await applyOutcome(unit, result.outcome, result.agentId, reason)
      await completeRunOn(store, listed.id)
      return { taskId: listed.id, outcome: result.outcome, transitions: applied.applied }
    })
    if (entry) out.push(entry)
  }
  return out
}
