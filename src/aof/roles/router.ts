/**
 * The AOF/1 router: one message in, one `RouteOutcome` out, never an exception. It parses (parse-message.ts),
 * checks what does not need the task (unknown type, `taskId` agreement between envelope and payload), then runs
 * the type's handler as one unit of work on the task (`TaskStore.withTask`: on the filesystem under the task's
 * cross-process lock, on NATS by compare-and-set), with the task freshly read. A handler that throws is
 * logged as `protocol.message.failed` and reported as rejected (`handler_error`); the router goes on.
 */

import { parseJsonOrUndefined } from '../../core/json.ts'
import { createHash } from 'node:crypto'
import { TeaError, errorMessage, isTeaError } from '../../core/errors.ts'
import { completionReport } from './handlers/completion-report.ts'
import { handleHandoffAck } from './handlers/handoff-ack.ts'
import { handleHandoffRequest, rejectDelegation } from './handlers/handoff-request.ts'
import { handleStatusUpdate } from './handlers/status-update.ts'
import { parseProtocolMessage } from '../protocol/parse-message.ts'
import { type RouteOutcome, rejectOn } from '../protocol/route-outcome.ts'
import type { ProtocolEnvelope, UnknownEnvelope } from '../protocol/schemas/envelope.ts'
import type { TaskStore, TaskUnit } from '../store/port.ts'

/**
 * Parses and routes a raw message (an envelope object, `AOF/1 {…}`, JSON text, or anything else: ignored) on any
 * task store (`routeMessage` in ../index.ts is this on the data dir's). A parsed envelope is first recorded with the store (`recordMessage`: on NATS
 * published on `<p>.msg.<type>` with its id as `Nats-Msg-Id`); one that was routed to its end before
 * (`wasRouted`) — the same message sent again, within the stream's duplicate window or after it — is not routed
 * again and comes back `ignored` with reason `duplicate`. One recorded by a sender that died before routing it is
 * routed. Its id is the envelope's own `id` when it has one, else the SHA-256 of the envelope (AOF/1 envelopes
 * carry no id; two identical messages are one message). Once routed, the message is marked (`markRouted`).
 */
export async function routeOn(store: TaskStore, input: unknown): Promise<RouteOutcome> {
  const parsed = await parseOn(store, input)
  if (!('envelope' in parsed)) return parsed
  const { envelope: env, messageId } = parsed
  const recorded = await store.recordMessage(messageId, env.type, JSON.stringify(env))
  // Marked: routed before, whether the stream still remembers the id (2 minutes) or not.
  if (recorded !== 'unrecorded' && (await store.wasRouted(messageId))) return duplicate(env)
  return routeMarked(store, env, recorded === 'unrecorded' ? undefined : messageId)
}

/**
 * A message for a router service (`tea aof send --no-route`): parsed and checked as `routeOn` does — a malformed one
 * is rejected and logged here, never queued — then recorded without routing. `queued` with the message id, or
 * `ignored`/`duplicate` when the store already holds it.
 */
export async function queueOn(store: TaskStore, input: unknown): Promise<RouteOutcome | QueuedOutcome> {
  const parsed = await parseOn(store, input)
  if (!('envelope' in parsed)) return parsed
  const { envelope: env, messageId } = parsed
  const recorded = await store.recordMessage(messageId, env.type, JSON.stringify(env), { queued: true })
  if (recorded === 'unrecorded') throw new TeaError('USAGE', `${store.where} keeps no message log to queue a message on; route it instead`)
  if (recorded === 'duplicate') return duplicate(env)
  return { outcome: 'queued', messageId, taskId: env.taskId, type: env.type }
}

export interface QueuedOutcome {
  outcome: 'queued'
  messageId: string
  taskId: string
  type: string
}

/**
 * Routes a message a router service took from the stream (it is recorded already): as `routeOn`, without recording
 * it again. `messageId` is the one it was recorded with, when the publisher gave one; else it is worked out as
 * `routeOn` does. A message already routed to its end (by another router, or by a router that died before its
 * ack) is `ignored`/`duplicate`.
 */
export async function routeRecorded(store: TaskStore, input: unknown, messageId?: string): Promise<RouteOutcome> {
  const parsed = await parseOn(store, input, messageId)
  if (!('envelope' in parsed)) return parsed
  if (await store.wasRouted(parsed.messageId)) return duplicate(parsed.envelope)
  return routeMarked(store, parsed.envelope, parsed.messageId)
}

/** The parsed envelope and its message id, or the outcome of a message that is not one (logged as rejected). */
async function parseOn(
  store: TaskStore,
  input: unknown,
  givenId?: string,
): Promise<RouteOutcome | { envelope: ProtocolEnvelope | UnknownEnvelope; messageId: string }> {
  const parsed = parseProtocolMessage(input)
  if (parsed.kind === 'ignored') return { outcome: 'ignored' }
  if (parsed.kind === 'rejected') {
    return rejectOn(store, undefined, parsed.reason, {
      ...(parsed.source ? { source: parsed.source } : {}),
      ...(parsed.error ? { error: parsed.error } : {}),
      ...(parsed.issues ? { issues: parsed.issues } : {}),
    })
  }
  const env = parsed.envelope
  const messageId = givenId ?? messageIdOf(input) ?? createHash('sha256').update(JSON.stringify(env)).digest('hex')
  return { envelope: env, messageId }
}

function duplicate(env: ProtocolEnvelope | UnknownEnvelope): RouteOutcome {
  return { outcome: 'ignored', reason: 'duplicate', taskId: env.taskId, type: env.type }
}

/** Routes and then marks the message routed: the mark comes after the effect committed (store-port.ts). */
async function routeMarked(store: TaskStore, env: ProtocolEnvelope | UnknownEnvelope, messageId?: string): Promise<RouteOutcome> {
  const outcome = await route(store, env, messageId)
  if (messageId !== undefined) await store.markRouted(messageId)
  return outcome
}

async function route(store: TaskStore, env: ProtocolEnvelope | UnknownEnvelope, messageId?: string): Promise<RouteOutcome> {
  if ('unknownType' in env) {
    await store.appendEvents([{ type: 'protocol.message.unknown', actor: env.fromAgent, taskId: env.taskId, payload: { type: env.type } }])
    return { outcome: 'rejected', reason: 'unknown_type', taskId: env.taskId, type: env.type }
  }
  const payloadTaskId = (env.payload as { taskId?: string }).taskId
  if (payloadTaskId !== undefined && payloadTaskId !== env.taskId) {
    return rejectOn(store, env, 'taskId_mismatch', { payloadTaskId })
  }
  try {
    return await store.withTask(env.taskId, async (unit) => {
      if (!unit) {
        if (env.type === 'handoff.request') return rejectDelegation(store, env, 'task_not_found')
        return rejectOn(store, env, 'task_not_found')
      }
      await store.appendEvents([
        {
          type: 'protocol.message.received',
          actor: env.fromAgent,
          taskId: env.taskId,
          payload: { type: env.type, ...(messageId ? { messageId } : {}) },
        },
      ])
      return dispatch(store, unit, env)
    })
  } catch (e) {
    await store.appendEvents([
      {
        type: 'protocol.message.failed',
        actor: env.fromAgent,
        taskId: env.taskId,
        payload: { type: env.type, error: errorMessage(e), ...(isTeaError(e) ? { code: e.code } : {}) },
      },
    ])
    return {
      outcome: 'rejected',
      reason: isTeaError(e, 'AOF_INVALID') ? 'task_unreadable' : 'handler_error',
      taskId: env.taskId,
      type: env.type,
    }
  }
}

function dispatch(store: TaskStore, unit: TaskUnit, env: ProtocolEnvelope): Promise<RouteOutcome> {
  switch (env.type) {
    case 'completion.report':
      return completionReport(store, unit, env)
    case 'status.update':
      return handleStatusUpdate(store, unit, env)
    case 'handoff.request':
      return handleHandoffRequest(store, unit, env)
    case 'handoff.accepted':
      return handleHandoffAck(store, unit, env, true)
    case 'handoff.rejected':
      return handleHandoffAck(store, unit, env, false)
  }
}

/** A string `id` the sender gave the message (kept out of the parsed envelope, whose schema has no such key). */
function messageIdOf(input: unknown): string | undefined {
  let raw = input
  if (typeof input === 'string') {
    raw = parseJsonOrUndefined(input.trim().replace(/^AOF\/1\s+/, ''))
  }
  const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined
  return typeof id === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(id) ? id : undefined
}
