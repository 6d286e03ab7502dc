/**
 * What routing one message produced — the JSON `tea aof send` prints — and the helper every rejection goes
 * through, so each rejection is logged exactly once as `protocol.message.rejected` with its reason.
 */

import type { EventInput } from './events.ts'
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

/**
 * The part of a task store (store-port.ts) a rejection or warning needs: named here, not imported, because the
 * port's own types name `RouteOutcome`.
 */
type EventLog = { appendEvents(events: EventInput[]): Promise<unknown> }

/** Logs the rejection (`protocol.message.rejected`, with its reason) on any task store, and says so. */
export async function rejectOn(
  store: EventLog,
  env: EnvelopeRef | undefined,
  reason: string,
  extra: Record<string, unknown> = {},
): Promise<RouteOutcome> {
  await store.appendEvents([rejectedEvent(env, reason, extra)])
  return rejected(env, reason, extra)
}

/** Logs a warning about the message (`protocol.message.warning`) on any task store; the reason. */
export async function warnOn(store: EventLog, env: EnvelopeRef, reason: string, extra: Record<string, unknown> = {}): Promise<string> {
  await store.appendEvents([warningEvent(env, reason, extra)])
  return reason
}

// --- internal ---

function rejectedEvent(env: EnvelopeRef | undefined, reason: string, extra: Record<string, unknown>): EventInput {
  return {
    type: 'protocol.message.rejected',
    actor: env?.fromAgent ?? 'unknown',
    ...(env ? { taskId: env.taskId } : {}),
    payload: { reason, ...(env ? { type: env.type } : {}), ...extra },
  }
}

function warningEvent(env: EnvelopeRef, reason: string, extra: Record<string, unknown>): EventInput {
  return { type: 'protocol.message.warning', actor: env.fromAgent, taskId: env.taskId, payload: { reason, ...extra } }
}

function rejected(env: EnvelopeRef | undefined, reason: string, extra: Record<string, unknown>): RouteOutcome {
  const issues = extra.issues as SchemaIssue[] | undefined
  return {
    outcome: 'rejected',
    reason,
    ...(env ? { taskId: env.taskId, type: env.type } : {}),
    ...(issues ? { issues } : {}),
  }
}
