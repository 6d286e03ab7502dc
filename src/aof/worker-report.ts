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

import { errorMessage, isTeaError } from '../core/errors.ts'
import type { AofContext } from './context.ts'
import { appendEvent } from './events.ts'
import { handleCompletionReport } from './handlers/completion-report.ts'
import { parseProtocolMessage } from './parse-message.ts'
import { type RouteOutcome, rejectMessage } from './route-outcome.ts'
import { readRun, readRunResult, resultBelongsToRun } from './run-artifacts.ts'
import type { Outcome } from './schemas/payloads.ts'
import type { TaskStatus } from './status.ts'
import { readTaskLocked, withTaskLock } from './task-store.ts'
import type { CompletionPayload } from './worker-completion.ts'

export type WorkerReport =
  /** The worker's report went through the router's handler (accepted, or rejected with a reason). */
  | { kind: 'sent'; outcome: Outcome; route: RouteOutcome; status?: TaskStatus }
  /** The agent had already reported for this run. */
  | { kind: 'agent'; outcome: Outcome; status?: TaskStatus }
  /** The task left the run (reclaimed, moved, re-leased): nothing was applied (on NATS logged as `stale_run`). */
  | { kind: 'lost'; status?: TaskStatus; reason?: 'stale_run' }

export interface ReportTarget {
  taskId: string
  agentId: string
  aofRunId: string
  /** `toAgent` of the envelope (default "orchestrator", as the aof.* actions). */
  to?: string
}

export async function reportCompletion(ctx: AofContext, target: ReportTarget, payload: CompletionPayload): Promise<WorkerReport> {
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
  return withTaskLock(ctx, taskId, () => {
    const task = readTaskLocked(ctx, taskId)
    const run = readRun(ctx, taskId)
    const status = task?.status
    if (run?.runId === aofRunId && run.status === 'completed') {
      const result = readRunResult(ctx, taskId)
      if (result && resultBelongsToRun(result, run)) return { kind: 'agent', outcome: result.outcome, ...(status && { status }) }
    }
    if (!task || task.status !== 'in-progress' || run?.runId !== aofRunId || run.status !== 'running')
      return { kind: 'lost', ...(status && { status }) }
    if (parsed.kind !== 'envelope' || 'unknownType' in parsed.envelope || parsed.envelope.type !== 'completion.report') {
      // Unreachable with a payload from worker-completion.ts; kept so a bad payload is logged, not thrown.
      const route = rejectMessage(
        ctx,
        { type: 'completion.report', taskId, fromAgent: agentId },
        parsed.kind === 'rejected' ? parsed.reason : 'invalid_envelope',
        {
          ...(parsed.kind === 'rejected' && parsed.issues ? { issues: parsed.issues } : {}),
        },
      )
      return { kind: 'sent', outcome: payload.outcome, route, status: task.status }
    }
    const env = parsed.envelope
    appendEvent(ctx, { type: 'protocol.message.received', actor: agentId, taskId, payload: { type: env.type } })
    let route: RouteOutcome
    try {
      route = handleCompletionReport(ctx, env, task)
    } catch (e) {
      appendEvent(ctx, {
        type: 'protocol.message.failed',
        actor: agentId,
        taskId,
        payload: { type: env.type, error: errorMessage(e), ...(isTeaError(e) ? { code: e.code } : {}) },
      })
      route = { outcome: 'rejected', reason: isTeaError(e, 'AOF_INVALID') ? 'task_unreadable' : 'handler_error', taskId, type: env.type }
    }
    const after = readTaskLocked(ctx, taskId)?.status
    return { kind: 'sent', outcome: payload.outcome, route, ...(after && { status: after }) }
  })
}
