/**
 * The worker's `completion.report`, delivered only to the AOF run the worker ran.
 *
 * `routeMessage` would accept a report from the lease holder whatever run is current; a worker whose task was
 * reclaimed and leased again by another worker of the same agent id would then close that worker's run. So the
 * worker checks, under the task's lock and in the same critical section as the handler, that the task is still in
 * progress in its run (`run.json` `runId`, status `running`) — the router's own steps (receipt event, handler,
 * failure event) are done here exactly as `route` does them.
 *
 * When the agent reported by itself (an `aof.report` node), the run is already `completed` with a result for this
 * run: the worker sends nothing and returns that result's outcome.
 */

import { errorMessage, isTeaError } from '../../core/errors.ts'
import type { AofContext } from '../store/fs/context.ts'
import { completionReport } from './handlers/completion-report.ts'
import { parseProtocolMessage } from '../protocol/parse-message.ts'
import { type RouteOutcome, rejectOn } from '../protocol/route-outcome.ts'
import { readRun, readRunResult, resultBelongsToRun } from '../store/fs/run-artifacts.ts'
import type { TaskStore } from '../store/port.ts'
import type { CompletionPayload, ReportTarget, WorkerReport } from '../protocol/worker-completion.ts'

export async function reportCompletion(
  ctx: AofContext,
  store: TaskStore,
  target: ReportTarget,
  payload: CompletionPayload,
): Promise<WorkerReport> {
  const { taskId, agentId, aofRunId } = target
  const parsed = parseProtocolMessage({
    protocol: 'aof',
    version: 1,
    type: 'completion.report',
    taskId,
    fromAgent: agentId,
    toAgent: target.to ?? 'orchestrator',
    sentAt: ctx.now().toISOString(),
    payload,
  })
  // One unit of work on the task: under its lock, the same critical section as the router's handler.
  return store.withTask(taskId, async (unit): Promise<WorkerReport> => {
    const task = unit?.task
    const run = readRun(ctx, taskId)
    const status = task?.status
    if (run?.runId === aofRunId && run.status === 'completed') {
      const result = readRunResult(ctx, taskId)
      if (result && resultBelongsToRun(result, run)) return { kind: 'agent', outcome: result.outcome, ...(status && { status }) }
    }
    if (!unit || unit.task.status !== 'in-progress' || run?.runId !== aofRunId || run.status !== 'running')
      return { kind: 'lost', ...(status && { status }) }
    if (parsed.kind !== 'envelope' || 'unknownType' in parsed.envelope || parsed.envelope.type !== 'completion.report') {
      // Unreachable with a payload from worker-completion.ts; kept so a bad payload is logged, not thrown.
      const route = await rejectOn(
        store,
        { type: 'completion.report', taskId, fromAgent: agentId },
        parsed.kind === 'rejected' ? parsed.reason : 'invalid_envelope',
        {
          ...(parsed.kind === 'rejected' && parsed.issues ? { issues: parsed.issues } : {}),
        },
      )
      return { kind: 'sent', outcome: payload.outcome, route, status: unit.task.status }
    }
    const env = parsed.envelope
    await store.appendEvents([{ type: 'protocol.message.received', actor: agentId, taskId, payload: { type: env.type } }])
    let route: RouteOutcome
    try {
      route = await completionReport(store, unit, env)
    } catch (e) {
      await store.appendEvents([
        {
          type: 'protocol.message.failed',
          actor: agentId,
          taskId,
          payload: { type: env.type, error: errorMessage(e), ...(isTeaError(e) ? { code: e.code } : {}) },
        },
      ])
      route = { outcome: 'rejected', reason: isTeaError(e, 'AOF_INVALID') ? 'task_unreadable' : 'handler_error', taskId, type: env.type }
    }
    return { kind: 'sent', outcome: payload.outcome, route, status: unit.task.status }
  })
}
