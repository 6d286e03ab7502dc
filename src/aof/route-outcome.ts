/**
 * What routing one message produced — the JSON `tea aof send` prints — and the helper every rejection goes
 * through, so each rejection is logged exactly once as `protocol.message.rejected` with its reason.
 */

import type { AofContext } from './context.ts'
import { appendEvent } from './events.ts'
import type { SchemaIssue } from './schemas/common.ts'
import type { TaskStatus } from './status.ts'

export interface RouteOutcome {
  outcome: 'accepted' | 'rejected' | 'ignored'
  reason?: string
  taskId?: string
  type?: string
  issues?: SchemaIssue[]
  transitions?: Array<{ from: TaskStatus; to: TaskStatus }>
  warnings?: string[]
}

export interface EnvelopeRef {
  type: string
  taskId: string
  fromAgent: string
}

export function rejectMessage(
  ctx: AofContext,
  env: EnvelopeRef | undefined,
  reason: string,
  extra: Record<string, unknown> = {},
): RouteOutcome {
  appendEvent(ctx, {
    type: 'protocol.message.rejected',
    actor: env?.fromAgent ?? 'unknown',
    ...(env ? { taskId: env.taskId } : {}),
    payload: { reason, ...(env ? { type: env.type } : {}), ...extra },
  })
  const issues = extra.issues as SchemaIssue[] | undefined
  return {
    outcome: 'rejected',
    reason,
    ...(env ? { taskId: env.taskId, type: env.type } : {}),
    ...(issues ? { issues } : {}),
  }
}

export function warn(ctx: AofContext, env: EnvelopeRef, reason: string, extra: Record<string, unknown> = {}): string {
  appendEvent(ctx, { type: 'protocol.message.warning', actor: env.fromAgent, taskId: env.taskId, payload: { reason, ...extra } })
  return reason
}
