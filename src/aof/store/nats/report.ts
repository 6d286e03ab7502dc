/**
 * The worker's `completion.report` on NATS (the filesystem store's is `worker-report.ts`, under the task lock).
 *
 * The report applies only while the task is in progress in the worker's run: `<ID>.run` has the worker's run id
 * and is running, and the lease is the worker's. The decision is taken on one revision of the task entry and
 * written by a compare-and-set on it, so a reclaim (or anything else) that moved the task in between makes the write
 * fail, and the next read sees the task gone from the run: the report is refused as `stale_run` (logged as
 * `protocol.message.rejected`), never applied on top of someone else's run.
 *
 * Order: the result (`<ID>.result`, tagged with the run id) is written first, then the compare-and-set (the commit
 * point), then the events are published with ids derived from task and run, and the run is marked completed last. A worker
 * that loses the server in the middle retries the whole report when it is back; the retry recognises its own
 * landed write (the task moved to where the outcome leads, the result and the run still its own) and only finishes
 * the bookkeeping, so nothing is applied or logged twice. A worker that dies after writing the result is finished
 * by the scheduler (`poll.ts` applies a stale run's own result rather than reclaiming it).
 */

import { parseProtocolMessage } from '../../protocol/parse-message.ts'
import { resolveCompletionTransitions } from '../../protocol/outcome.ts'
import { resultBelongsToRun } from '../fs/run-artifacts.ts'
import type { RunArtifact, RunResult } from '../../protocol/schemas/run.ts'
import { type Task, taskLease, taskMetadata } from '../../protocol/task-file.ts'
import type { CompletionPayload } from '../../protocol/worker-completion.ts'
import type { ReportTarget, WorkerReport } from '../../protocol/worker-completion.ts'
import type { NatsOps } from './ops.ts'
import { completedRun, outcomeEventId, outcomeMove } from './outcome.ts'

const TYPE = 'completion.report'

export async function natsReportCompletion(ops: NatsOps, target: ReportTarget, payload: CompletionPayload): Promise<WorkerReport> {
  const { taskId, agentId, aofRunId } = target
  const sentAt = (await ops.now()).toISOString()
  const parsed = parseProtocolMessage({
    protocol: 'aof',
    version: 1,
    type: TYPE,
    taskId,
    fromAgent: agentId,
    toAgent: target.to ?? 'orchestrator',
    sentAt,
    payload,
  })
  if (parsed.kind !== 'envelope' || 'unknownType' in parsed.envelope || parsed.envelope.type !== TYPE) {
    // Unreachable with a payload from worker-completion.ts; kept so a bad payload is logged, not thrown.
    const reason = parsed.kind === 'rejected' ? parsed.reason : 'invalid_envelope'
    await ops.appendEvents([{ type: 'protocol.message.rejected', actor: agentId, taskId, payload: { reason, type: TYPE } }])
    const status = (await ops.read(taskId))?.task.status
    return { kind: 'sent', outcome: payload.outcome, route: { outcome: 'rejected', reason, taskId, type: TYPE }, ...(status && { status }) }
  }
  const p = parsed.envelope.payload
  const result: RunResult = {
    taskId,
    agentId,
    runId: aofRunId,
    completedAt: sentAt,
    outcome: p.outcome,
    summaryRef: p.summaryRef,
    handoffRef: 'outputs/handoff.md',
    deliverables: p.deliverables,
    tests: p.tests,
    blockers: p.blockers,
    notes: p.notes,
  }
  for (;;) {
    const entry = await ops.read(taskId)
    const run = await ops.readRun(taskId)
    const task = entry?.task
    const status = task?.status
    const ours = run !== undefined && run.runId === aofRunId
    if (ours && run.status === 'completed') {
      // The outcome was applied already: by the agent itself, by our own earlier attempt, or by the scheduler.
      const stored = await ops.readResult(taskId)
      if (stored && resultBelongsToRun(stored, run)) return { kind: 'agent', outcome: stored.outcome, ...(status && { status }) }
    }
    if (!task || !entry || !ours || run.status !== 'running' || task.status !== 'in-progress' || holder(task, run) !== agentId) {
      if (task && ours && run.status === 'running' && (await landed(ops, task, result))) {
        return finish(ops, task, run, result)
      }
      const payload = { reason: 'stale_run', type: TYPE, runId: aofRunId, ...(run?.runId ? { currentRunId: run.runId } : {}) }
      await ops.appendEvents([{ type: 'protocol.message.rejected', actor: agentId, taskId, payload: { ...payload, status } }])
      return { kind: 'lost', reason: 'stale_run', ...(status && { status }) }
    }
    await ops.putRunEntry(`${taskId}.result`, result)
    const at = await ops.now()
    const move = outcomeMove(ops, task, result, at, agentId)
    if (!(await ops.cas(move.next, entry.revision))) continue
    return finish(ops, move.next, run, result, at)
  }
}

/** Who holds the task in `run`: the lease's agent when the lease is of that run (or names none), else nobody. */
function holder(task: Task, run: RunArtifact): string | undefined {
  const lease = taskLease(task)
  if (!lease) return run.agentId
  return lease.runId === undefined || lease.runId === run.runId ? lease.agent : undefined
}

/** Whether our own compare-and-set landed before its reply was lost: the task is where our outcome leads, with our result. */
async function landed(ops: NatsOps, task: Task, result: RunResult): Promise<boolean> {
  const steps = resolveCompletionTransitions({ status: 'in-progress', metadata: taskMetadata(task) }, result.outcome)
  if (steps.at(-1) !== task.status) return false
  const stored = await ops.readResult(task.id)
  return stored !== undefined && stored.runId === result.runId && stored.outcome === result.outcome
}

/** After the compare-and-set: the run marked completed, the events published (the moves recomputed from in-progress). */
async function finish(ops: NatsOps, task: Task, run: RunArtifact, result: RunResult, at?: Date): Promise<WorkerReport> {
  const t = at ?? (await ops.now())
  const actor = result.agentId
  const move = outcomeMove(ops, { ...task, status: 'in-progress' }, result, t, actor)
  const events = [
    { type: 'protocol.message.received', actor, taskId: task.id, payload: { type: TYPE } },
    ...move.events,
    { type: 'task.completed', actor, taskId: task.id, payload: { outcome: result.outcome, runId: result.runId } },
  ]
  const ids = [outcomeEventId(task.id, result.runId, 'received'), ...move.ids, outcomeEventId(task.id, result.runId, 'completed')]
  await ops.appendEvents(events, t, ids)
  // Last: while the run still reads `running`, a retry after a failure here finds its landed write and finishes again
  // (the events, re-published with the same ids, are dropped as duplicates).
  await ops.putRunEntry(`${task.id}.run`, completedRun(run, t))
  return {
    kind: 'sent',
    outcome: result.outcome,
    route: { outcome: 'accepted', taskId: task.id, type: TYPE, transitions: move.applied },
    status: task.status,
  }
}
