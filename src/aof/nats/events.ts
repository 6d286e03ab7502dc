/**
 * Reading the event stream back (`tea aof events`, lint, tests): an ordered consumer from the first message to the
 * last one the stream held when the read began, filtered here as the filesystem reader filters its log lines. A
 * message that is not an event is skipped, as a torn or foreign log line is.
 */

import type { AofEvent, EventFilter } from '../events.ts'
import type { JetStreamClient, JetStreamManager } from './client.ts'

export async function readEventStream(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  filter: EventFilter,
  unpack: (bytes: Uint8Array) => Promise<string>,
): Promise<AofEvent[]> {
  const last = (await jsm.streams.info(stream)).state.last_seq
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
      // Protocol messages share the stream (`<p>.msg.>`); only events are read here.
      if (!m.subject.includes('.events.')) {
        if (seq >= last) break
        continue
      }
      let e: AofEvent
      try {
        e = JSON.parse(await unpack(m.data)) as AofEvent
      } catch {
        continue
      }
      if (filter.taskId !== undefined && e.taskId !== filter.taskId) continue
      if (filter.type !== undefined && e.type !== filter.type) continue
      out.push(e)
      if (seq >= last) break
    }
    if (got === 0) break
  }
  await consumer.delete().catch(() => {})
  return out
}
