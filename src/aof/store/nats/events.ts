/**
 * Reading the event stream back (`tea aof events`, lint, tests): an ordered consumer from the first message to the
 * last one the stream held when the read began, filtered here as the filesystem reader filters its log lines. A
 * message that is not an event is skipped, as a torn or foreign log line is.
 */

import { parseJsonOrUndefined } from '../../../core/json.ts'
import { isPlainObject } from '../../../core/util.ts'
import type { AofEvent, EventFilter } from '../../protocol/events.ts'
import type { JetStreamClient, JetStreamManager } from './client.ts'

export async function readEventStream(
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
