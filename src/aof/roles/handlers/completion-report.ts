/**
 * `completion.report`: the agent says how its run ended. We write `run_result.json` (tagged with the current run's
 * id), apply the outcome's transitions at once, mark the run completed and log `task.completed`. A report sent
 * before the current run started belongs to an earlier run and is refused (`stale_run`), so it can never move a
 * later run's task. Re-delivery is harmless: the result is rewritten unchanged and no step is repeated.
 *
 * `completionReport` is the handler on any task store: the router's, and the worker's own report
 * (worker-report.ts), each as one unit of work on the task.
 */

import { posix } from 'node:path'
import { authorizeRun } from '../../protocol/authorize.ts'
import { outcomeReason } from '../../protocol/outcome.ts'
import { runResultOf } from '../../protocol/runs.ts'
import { applyOutcome } from '../apply-outcome.ts'
import { type RouteOutcome, rejectOn, warnOn } from '../../protocol/route-outcome.ts'
import { completeRunOn, writeRunResultOn } from '../run-files.ts'
import type { CompletionReportEnvelope } from '../../protocol/schemas/envelope.ts'
import type { TaskStore, TaskUnit } from '../../store/port.ts'
import type { Task } from '../../protocol/task-file.ts'

/** `ids`, when given, names the events of the report (the worker's: see worker-report.ts). */
export async function completionReport(
  store: TaskStore,
  unit: TaskUnit,
  env: CompletionReportEnvelope,
  ids?: (what: string) => string,
): Promise<RouteOutcome> {
  const task = unit.task
  const run = await store.readRun(task.id)
  const auth = authorizeRun(task, run, env.fromAgent)
  if (!auth.ok) return rejectOn(store, env, auth.reason, { sender: env.fromAgent, expected: auth.expected })
  const sentAt = new Date(env.sentAt).toISOString()
  if (run && Date.parse(sentAt) < Date.parse(run.startedAt)) {
    return rejectOn(store, env, 'stale_run', { sentAt, runStartedAt: run.startedAt, runId: run.runId })
  }
  const p = env.payload
  const warnings: string[] = []
  const summary = await summaryProblemOn(store, task, p.summaryRef)
  if (summary) warnings.push(await warnOn(store, env, summary, { summaryRef: p.summaryRef }))
  await writeRunResultOn(store, runResultOf(env, run?.runId))
  const applied = await applyOutcome(unit, p.outcome, env.fromAgent, outcomeReason(p.outcome, p.blockers, p.notes), ids)
  await store.appendEvents([
    {
      type: 'task.completed',
      actor: env.fromAgent,
      taskId: task.id,
      payload: { outcome: p.outcome, ...(run?.runId ? { runId: run.runId } : {}) },
      ...(ids ? { eventId: ids('completed') } : {}),
    },
  ])
  // Last: while the run still reads `running`, a worker's report retried after a lost reply finds its own write.
  if (run?.status === 'running') await completeRunOn(store, task.id)
  return {
    outcome: 'accepted',
    taskId: task.id,
    type: env.type,
    transitions: applied.applied,
    ...(warnings.length ? { warnings } : {}),
  }
}

/**
 * Whether `summaryRef` names something in the task's companion folder: a file, or a folder holding some; outside
 * it is `summary_ref_outside_task`, absent `summary_file_not_found` (each a warning, never a rejection).
 */
async function summaryProblemOn(store: TaskStore, task: Task, ref: string): Promise<string | undefined> {
  if (ref === '') return undefined
  const rel = posix.normalize(ref)
  if (rel === '..' || rel.startsWith('../') || posix.isAbsolute(rel)) return 'summary_ref_outside_task'
  const name = rel.replace(/\/+$/, '')
  const files = await store.listFiles(task.id)
  return name === '.' || files.some((f) => f === name || f.startsWith(`${name}/`)) ? undefined : 'summary_file_not_found'
}

/** `summaryRef` is resolved inside the task's companion folder (the reference used the process's cwd). */
