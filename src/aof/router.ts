/**
 * The AOF/1 router: one message in, one `RouteOutcome` out, never an exception. It parses (parse-message.ts),
 * checks what does not need the task (unknown type, `taskId` agreement between envelope and payload), then runs
 * the type's handler under the task's cross-process lock with the task freshly read. A handler that throws is
 * logged as `protocol.message.failed` and reported as rejected (`handler_error`); the router goes on.
 */

import { errorMessage, isTeaError } from '../core/errors.ts'
import type { AofContext } from './context.ts'
import { appendEvent } from './events.ts'
import { handleCompletionReport } from './handlers/completion-report.ts'
import { handleHandoffAck } from './handlers/handoff-ack.ts'
import { handleHandoffRequest, rejectDelegation } from './handlers/handoff-request.ts'
import { handleStatusUpdate } from './handlers/status-update.ts'
import { parseProtocolMessage } from './parse-message.ts'
import { type RouteOutcome, rejectMessage } from './route-outcome.ts'
import type { ProtocolEnvelope, UnknownEnvelope } from './schemas/envelope.ts'
import type { Task } from './task-file.ts'
import { readTaskLocked, withTaskLock } from './task-store.ts'

/** Parses and routes a raw message: an envelope object, `AOF/1 {…}`, JSON text, or anything else (ignored). */
export async function routeMessage(ctx: AofContext, input: unknown): Promise<RouteOutcome> {
  const parsed = parseProtocolMessage(input)
  if (parsed.kind === 'ignored') return { outcome: 'ignored' }
  if (parsed.kind === 'rejected') {
    return rejectMessage(ctx, undefined, parsed.reason, {
      ...(parsed.source ? { source: parsed.source } : {}),
      ...(parsed.error ? { error: parsed.error } : {}),
      ...(parsed.issues ? { issues: parsed.issues } : {}),
    })
  }
  return route(ctx, parsed.envelope)
}

export async function route(ctx: AofContext, env: ProtocolEnvelope | UnknownEnvelope): Promise<RouteOutcome> {
  if ('unknownType' in env) {
    appendEvent(ctx, { type: 'protocol.message.unknown', actor: env.fromAgent, taskId: env.taskId, payload: { type: env.type } })
    return { outcome: 'rejected', reason: 'unknown_type', taskId: env.taskId, type: env.type }
  }
  const payloadTaskId = (env.payload as { taskId?: string }).taskId
  if (payloadTaskId !== undefined && payloadTaskId !== env.taskId) {
    return rejectMessage(ctx, env, 'taskId_mismatch', { payloadTaskId })
  }
  try {
    return await withTaskLock(ctx, env.taskId, () => {
      const task = readTaskLocked(ctx, env.taskId)
      if (!task) {
        if (env.type === 'handoff.request') return rejectDelegation(ctx, env, 'task_not_found')
        return rejectMessage(ctx, env, 'task_not_found')
      }
      appendEvent(ctx, { type: 'protocol.message.received', actor: env.fromAgent, taskId: env.taskId, payload: { type: env.type } })
      return dispatch(ctx, env, task)
    })
  } catch (e) {
    appendEvent(ctx, {
      type: 'protocol.message.failed',
      actor: env.fromAgent,
      taskId: env.taskId,
      payload: { type: env.type, error: errorMessage(e), ...(isTeaError(e) ? { code: e.code } : {}) },
    })
    return {
      outcome: 'rejected',
      reason: isTeaError(e, 'AOF_INVALID') ? 'task_unreadable' : 'handler_error',
      taskId: env.taskId,
      type: env.type,
    }
  }
}

function dispatch(ctx: AofContext, env: ProtocolEnvelope, task: Task): RouteOutcome {
  switch (env.type) {
    case 'completion.report':
      return handleCompletionReport(ctx, env, task)
    case 'status.update':
      return handleStatusUpdate(ctx, env, task)
    case 'handoff.request':
      return handleHandoffRequest(ctx, env, task)
    case 'handoff.accepted':
      return handleHandoffAck(ctx, env, task, true)
    case 'handoff.rejected':
      return handleHandoffAck(ctx, env, task, false)
  }
}
