/**
 * The worker's `completion.report`, delivered only to the AOF run the worker ran — one rule on every store.
 *
 * `routeMessage` would accept a report from the lease holder whatever run is current; a worker whose task was
 * reclaimed and leased again by another worker of the same agent id would then close that worker's run. So the
 * report is one unit of work on the task (`TaskStore.withTask`: under the task's lock on the filesystem, a
 * compare-and-set at the revision read on NATS) that first checks the task is still in progress in the worker's run
 * (`run.json` `runId`, status `running`, and a lease that names no other run), then runs the router's own
 * completion handler, with the router's receipt and failure events. A task that left the run is `lost`: nothing is
 * applied or logged.
 *
 * When the agent reported by itself (an `aof.report` node), the run is already `completed` with a result for this
 * run: the worker sends nothing and returns that result's outcome.
 *
 * A report that fails for the store's reasons (a lost compare-and-set, a server gone away) is not a refusal: the
 * error goes on to `withTask` and to the worker, and only the protocol's own errors come back as `handler_error`.
 *
 * A report retried after its reply was lost (the server went away after the write landed) finds its own write — the
 * task on its outcome's path, the result and the run still its own — and finishes the rest instead of calling the
 * task lost. Its events carry ids made of the task, the run and the fact, so a store that drops duplicate ids (NATS)
 * keeps one copy of what the first attempt had already logged.
 */

import { errorMessage, isTeaError } from '../../core/errors.ts'
import { outcomeReason, outcomeSteps } from '../protocol/outcome.ts'
import { parseProtocolMessage } from '../protocol/parse-message.ts'
import { type RouteOutcome, rejectOn } from '../protocol/route-outcome.ts'
import { resultBelongsToRun } from '../protocol/runs.ts'
import type { RunArtifact } from '../protocol/schemas/run.ts'
import { taskLease, taskMetadata } from '../protocol/task-file.ts'
import type { CompletionPayload, ReportTarget, WorkerReport } from '../protocol/worker-completion.ts'
import type { TaskStore, TaskUnit } from '../store/port.ts'
import { applyOutcome } from './apply-outcome.ts'
import { completionReport } from './handlers/completion-report.ts'
import { completeRunOn, readRunResultOn } from './run-files.ts'

const TYPE = 'completion.report'

export async function reportCompletion(store: TaskStore, target: ReportTarget, payload: CompletionPayload): Promise<WorkerReport> {
  const { taskId, agentId, aofRunId } = target
  const parsed = parseProtocolMessage({
    protocol: 'aof',
    version: 1,
    type: TYPE,
    taskId,
    fromAgent: agentId,
    toAgent: target.to ?? 'orchestrator',
    sentAt: (await store.now()).toISOString(),
    payload,
  })
  const ids = (what: string) => `outcome-${taskId}-${aofRunId}-${what}`
  return store.withTask(taskId, async (unit): Promise<WorkerReport> => {
    const status = unit?.task.status
    const run = await store.readRun(taskId)
    const ours = run !== undefined && run.runId === aofRunId
    if (ours && run.status === 'completed') {
      const result = await readRunResultOn(store, taskId)
      if (result && resultBelongsToRun(result, run)) return { kind: 'agent', outcome: result.outcome, ...(status && { status }) }
    }
    if (!unit || !ours || run.status !== 'running') return { kind: 'lost', ...(status && { status }) }
    if (unit.task.status !== 'in-progress' || !leaseOfRun(unit, run)) {
      if (await landed(store, unit, run, payload)) return finish(store, unit, run, ids)
      return { kind: 'lost', ...(status && { status }) }
    }
    if (parsed.kind !== 'envelope' || 'unknownType' in parsed.envelope || parsed.envelope.type !== TYPE) {
      // Unreachable with a payload from worker-completion.ts; kept so a bad payload is logged, not thrown.
      const reason = parsed.kind === 'rejected' ? parsed.reason : 'invalid_envelope'
      const issues = parsed.kind === 'rejected' && parsed.issues ? { issues: parsed.issues } : {}
      const route = await rejectOn(store, { type: TYPE, taskId, fromAgent: agentId }, reason, issues)
      return { kind: 'sent', outcome: payload.outcome, route, status: unit.task.status }
    }
    const env = parsed.envelope
    await store.appendEvents([
      { type: 'protocol.message.received', actor: agentId, taskId, payload: { type: TYPE }, eventId: ids('received') },
    ])
    let route: RouteOutcome
    try {
      route = await completionReport(store, unit, env, ids)
    } catch (e) {
      // Only the protocol's own errors are the handler's refusal. Anything else is the store's: a lost
      // compare-and-set must reach `withTask` (which runs the unit again on what is there now: a task reclaimed
      // meanwhile is then `lost`), and a server gone away must reach the worker, which reports again once it is back.
      if (!isTeaError(e)) throw e
      const error = { type: TYPE, error: errorMessage(e), ...(isTeaError(e) ? { code: e.code } : {}) }
      await store.appendEvents([{ type: 'protocol.message.failed', actor: agentId, taskId, payload: error }])
      route = { outcome: 'rejected', reason: isTeaError(e, 'AOF_INVALID') ? 'task_unreadable' : 'handler_error', taskId, type: TYPE }
    }
    return { kind: 'sent', outcome: payload.outcome, route, status: unit.task.status }
  })
}

/**
 * Whether the task's lease is of `run`: a lease names its run (NATS writes `runId` with the lease, before the run
 * entry exists), so a lease of a newer run by the same agent id is not the worker's.
 */
function leaseOfRun(unit: TaskUnit, run: RunArtifact): boolean {
  const leaseRun = taskLease(unit.task)?.runId
  return typeof leaseRun !== 'string' || leaseRun === run.runId
}

/** Whether this report's write landed before its reply was lost: the task is on the outcome's path, with our result. */
async function landed(store: TaskStore, unit: TaskUnit, run: RunArtifact, payload: CompletionPayload): Promise<boolean> {
  const path = outcomeSteps({ status: 'in-progress', metadata: taskMetadata(unit.task) }, payload.outcome).applied
  if (!path.some((s) => s.to === unit.task.status)) return false
  const stored = await readRunResultOn(store, unit.task.id)
  return stored !== undefined && stored.runId === run.runId && stored.outcome === payload.outcome
}

/** The rest of a landed report: the moves it made logged again (same ids), the steps left applied, the run completed. */
async function finish(store: TaskStore, unit: TaskUnit, run: RunArtifact, ids: (what: string) => string): Promise<WorkerReport> {
  const result = (await readRunResultOn(store, unit.task.id))!
  const { agentId: actor, outcome } = result
  const taskId = unit.task.id
  const reason = outcomeReason(outcome, result.blockers, result.notes)
  const path = outcomeSteps({ status: 'in-progress', metadata: taskMetadata(unit.task) }, outcome).applied
  const reached = path.slice(0, path.findIndex((s) => s.to === unit.task.status) + 1)
  await store.appendEvents([
    { type: 'protocol.message.received', actor, taskId, payload: { type: TYPE }, eventId: ids('received') },
    ...reached.map(({ from, to }) => ({
      type: 'task.transitioned',
      actor,
      taskId,
      payload: { from, to, ...(reason ? { reason } : {}) },
      eventId: ids(`to-${to}`),
    })),
  ])
  const rest = await applyOutcome(unit, outcome, actor, reason, ids)
  await store.appendEvents([{ type: 'task.completed', actor, taskId, payload: { outcome, runId: run.runId }, eventId: ids('completed') }])
  await completeRunOn(store, taskId)
  const transitions = [...reached, ...rest.applied]
  return { kind: 'sent', outcome, route: { outcome: 'accepted', taskId, type: TYPE, transitions }, status: unit.task.status }
}
