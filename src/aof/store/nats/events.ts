/**
 * The event stream `<p>_events`, subjects `<p>.events.<type>`. Publishing: one event a message, `Nats-Msg-Id` = its
 * event id, so a publish repeated within the duplicate window is dropped. Reading back (`tea aof events`, lint,
 * tests): an ordered consumer from the first message to the last one the stream held when the read began, filtered
 * here as the filesystem reader filters its log lines. A message that is not an event is skipped, as a torn or
 * foreign log line is.
 */

import { parseJsonOrUndefined } from '../../../core/json.ts'
import { isPlainObject } from '../../../core/util.ts'
import { type AofEvent, type EventFilter, type EventInput, stampEvents } from '../../protocol/events.ts'
import type { JetStreamClient, JetStreamManager } from './client.ts'
import type { NatsContext } from './context.ts'
import { publishOnce, subjectToken } from './entries.ts'

/** Publishes events stamped `at` (default now); `ids` fixes their event ids, making a re-publish a dropped duplicate. */
export async function appendEvents(ctx: NatsContext, inputs: EventInput[], at?: Date, ids?: string[]): Promise<AofEvent[]> {
  const events = stampEvents(inputs, (at ?? new Date()).toISOString()).map((e, i) => (ids?.[i] ? { ...e, eventId: ids[i] } : e))
  for (const e of events) {
    const subject = `${ctx.p}.events.${subjectToken(e.type)}`
    const packed = await ctx.pack(JSON.stringify(e))
    await publishOnce(() => ctx.js.publish(subject, packed, { msgID: e.eventId }))
  }
  return events
}

/** Events of another store (`tea aof copy`) not yet in the stream, published as they are; how many were added. */
export async function importEvents(ctx: NatsContext, events: readonly AofEvent[]): Promise<number> {
  const known = new Set((await readEvents(ctx)).map((e) => e.eventId))
  let added = 0
  for (const e of events) {
    if (known.has(e.eventId)) continue
    known.add(e.eventId)
    await ctx.js.publish(`${ctx.p}.events.${subjectToken(e.type)}`, await ctx.pack(JSON.stringify(e)), { msgID: e.eventId })
    added++
  }
  return added
}

export function readEvents(ctx: NatsContext, filter: EventFilter = {}): Promise<AofEvent[]> {
  return readEventStream(ctx.js, ctx.jsm, ctx.stream, filter, ctx.unpack)
}

async function readEventStream(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  filter: EventFilter,
  unpack: (bytes: Uint8Array) => Promise<string>,
): Promise<AofEvent[]> {
  const last = (await jsm.streams.info(stream)).state.last_seq
  // Protocol messages share the stream (`<p>.msg.>`); only `<p>.events.>` holds events.
  const prefix = `${stream.replace(/_events$/, '')}.events.`
  const out: AofEvent[] = []
  if (last === 0) return out
  const consumer = await js.consumers.get(stream)
  let seq = 0
  while (seq < last) {
    const batch = await consumer.fetch({ max_messages: 500, expires: 5_000 })
    let got = 0
    for await (const m of batch) {
      got++
      seq = m.seq
      const e = m.subject.startsWith(prefix) ? await eventOf(m.data, unpack) : undefined
      if (e && (filter.taskId === undefined || e.taskId === filter.taskId) && (filter.type === undefined || e.type === filter.type)) {
        out.push(e)
      }
      // Checked on every message, kept or not: waiting for more would last until the fetch expires.
      if (seq >= last) break
    }
    if (got === 0) break
  }
  await consumer.delete().catch(() => {})
  return out
}

/** The event a message on `<p>.events.>` holds; undefined when it is unreadable. */
async function eventOf(data: Uint8Array, unpack: (bytes: Uint8Array) => Promise<string>): Promise<AofEvent | undefined> {
  try {
    const e = parseJsonOrUndefined(await unpack(data))
    return isPlainObject(e) ? (e as unknown as AofEvent) : undefined
  } catch {
    return undefined
  }
}
