/**
 * The filesystem store's event log: `events/YYYY-MM-DD.jsonl`, one JSON object per line, the file chosen by the UTC
 * date of the event's timestamp. Each line is one O_APPEND write, so concurrent writers never interleave.
 */

import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseJsonOrUndefined } from '../../../core/json.ts'
import { isPlainObject } from '../../../core/util.ts'
import { type AofEvent, type EventFilter, type EventInput, stampEvents } from '../../protocol/events.ts'
import { type AofContext, eventsDir } from './context.ts'
import { appendLine, errno, isNotRegular, readError, readRegular } from './fs-atomic.ts'

export function appendEvent(ctx: AofContext, input: EventInput): AofEvent {
  return appendEvents(ctx, [input])[0]!
}

/**
 * Several events of one step in one write (so in one file, stamped alike): a step that logs two facts — a lease's
 * `task.transitioned` and `lease.acquired` — logs both or neither, and can be undone when the write fails.
 */
export function appendEvents(ctx: AofContext, inputs: EventInput[]): AofEvent[] {
  const timestamp = ctx.now().toISOString()
  const events = stampEvents(inputs, timestamp)
  appendLine(join(eventsDir(ctx), `${timestamp.slice(0, 10)}.jsonl`), events.map((e) => JSON.stringify(e)).join('\n'))
  return events
}

/** Every event, oldest file first; a torn or foreign line is skipped rather than failing the read. */
export function readEvents(ctx: AofContext, filter: EventFilter = {}): AofEvent[] {
  let files: string[]
  try {
    files = readdirSync(eventsDir(ctx))
      .filter((f) => /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(f))
      .sort()
  } catch (e) {
    if (errno(e) === 'ENOENT') return []
    throw e
  }
  const out: AofEvent[] = []
  for (const f of files) {
    let text: string
    try {
      text = readRegular(join(eventsDir(ctx), f))
    } catch (e) {
      // Gone since the listing, or not a log at all (a FIFO would block the reader; a symlink may lead anywhere):
      // skipped like a foreign line. `tea aof lint` names it.
      if (errno(e) === 'ENOENT' || isNotRegular(e)) continue
      throw readError(e, join(eventsDir(ctx), f), 'event log')
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue
      const parsed = parseJsonOrUndefined(line)
      if (!isPlainObject(parsed)) continue
      const e = parsed as unknown as AofEvent
      if (filter.taskId !== undefined && e.taskId !== filter.taskId) continue
      if (filter.type !== undefined && e.type !== filter.type) continue
      out.push(e)
    }
  }
  return out
}
