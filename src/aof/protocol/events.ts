/**
 * AOF events: one fact each (`eventId, type, timestamp, actor, taskId?, payload`), the reference's shape except that
 * `eventId` is a string unique across processes: time-sortable id + pid + a per-process sequence (the reference used
 * a per-process counter from 1, so two processes wrote the same ids). Each fact is logged once, by the layer that
 * performed it. Where the events are kept is the store's business: `store/fs/event-log.ts` (one JSONL file a day),
 * `store/nats/` (a stream).
 */

import { sortableId } from '../../core/ids.ts'

export interface AofEvent {
  eventId: string
  type: string
  timestamp: string
  actor: string
  taskId?: string
  payload: Record<string, unknown>
}

export interface EventInput {
  type: string
  actor: string
  taskId?: string
  payload?: Record<string, unknown>
  /**
   * A fixed id, for a fact that two writers may log (a run's completion, applied by its worker or by the scheduler,
   * a report retried after a lost reply): a store that drops duplicate ids (NATS) then keeps one copy.
   */
  eventId?: string
}

export interface EventFilter {
  taskId?: string
  type?: string
}

let sequence = 0

export function newEventId(): string {
  sequence += 1
  return `${sortableId()}-${process.pid.toString(36)}-${sequence.toString(36)}`
}

/** The events of one step, each with its own id and all with one timestamp (every task store logs them so). */
export function stampEvents(inputs: EventInput[], timestamp: string): AofEvent[] {
  return inputs.map(
    (input): AofEvent => ({
      eventId: input.eventId ?? newEventId(),
      type: input.type,
      timestamp,
      actor: input.actor,
      ...(input.taskId === undefined ? {} : { taskId: input.taskId }),
      payload: input.payload ?? {},
    }),
  )
}
