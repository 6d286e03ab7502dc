/**
 * What tea serve's MQTT triggers have taken from the broker, on disk, so that each message starts exactly one run
 * across a kill, a power cut and a broker restart.
 *
 * MQTT's QoS 1 is at-least-once: the broker sends a message again (the DUP flag set, the same packet id) on the
 * next connection of the session when it has not seen the client's PUBACK. So a message is written down here —
 * fsync'd — *before* it is acknowledged, and a run is started from what was written:
 * - killed before the write: no PUBACK went out; the broker sends the message again and it is taken then;
 * - killed after the write: the message's run id is in `pending/`, and the next start starts that run (or finds it
 *   in the store, started, and leaves it to the resume of unfinished runs) — and if the PUBACK was lost with the
 *   process, the broker's second copy (DUP, same packet id, same topic and payload) is recognised in `seen.json`
 *   and acknowledged without a second run.
 *
 * `seen.json` keeps the last SEEN_KEPT messages taken: a broker re-sends only what is in flight, which is at most
 * its in-flight window (mosquitto's max_inflight_messages, 20 by default). A first delivery never carries DUP, so a
 * new message that happens to repeat an old one's packet id, topic and payload is never mistaken for it — except
 * in one case: when tea was killed between receiving it and writing it here (milliseconds) and its second copy
 * (DUP) then matches an entry still kept. With mosquitto, which numbers packet ids in turn, that needs 65,535
 * messages in between; a broker that reuses ids at once could drop such a repeated message.
 *
 * `pending/<run id>.json` is `{"trigger", "topic", "input"}`, removed once the run has ended in this process (or is
 * found in the store at start). Files are replaced whole (a temporary file renamed over them).
 */

import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { parseJson } from '../../core/json.ts'
import { isPlainObject, type State } from '../../core/util.ts'

/** Messages remembered for recognising a broker's second copy: well above any broker's in-flight window. */
const SEEN_KEPT = 256

/** One message as a trigger took it: which trigger, the broker's packet id, a digest of topic and payload. */
export interface MessageKey {
  trigger: string
  packetId: number
  digest: string
}

export interface PendingRun {
  runId: string
  trigger: string
  topic: string
  input: State
}

interface Seen extends MessageKey {
  run: string
}

export class TriggerJournal {
  private readonly dir: string
  private readonly pendingDir: string
  private seen: Seen[]

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'serve-mqtt')
    this.pendingDir = join(this.dir, 'pending')
    mkdirSync(this.pendingDir, { recursive: true })
    this.seen = readSeen(join(this.dir, 'seen.json'))
  }

  /** The run a message with this key started, when one did (a second copy of it). */
  runOf(key: MessageKey): string | undefined {
    return this.seen.findLast((s) => s.trigger === key.trigger && s.packetId === key.packetId && s.digest === key.digest)?.run
  }

  /** Writes a taken message down (durably) before it is acknowledged; `key` absent for QoS 0 (never sent twice). */
  take(run: PendingRun, key?: MessageKey): void {
    writeDurable(join(this.pendingDir, `${run.runId}.json`), JSON.stringify({ trigger: run.trigger, topic: run.topic, input: run.input }))
    if (!key) return
    this.seen = [...this.seen.filter((s) => !(s.trigger === key.trigger && s.packetId === key.packetId)), { ...key, run: run.runId }]
    if (this.seen.length > SEEN_KEPT) this.seen = this.seen.slice(-SEEN_KEPT)
    writeDurable(join(this.dir, 'seen.json'), JSON.stringify(this.seen))
  }

  /** The runs written down whose end this process has not seen, oldest first. */
  pending(): PendingRun[] {
    const runs: PendingRun[] = []
    for (const name of readdirSync(this.pendingDir).sort()) {
      if (!name.endsWith('.json')) continue
      try {
        const data = parseJson(readFileSync(join(this.pendingDir, name), 'utf8'), name)
        if (isPlainObject(data) && typeof data.trigger === 'string' && typeof data.topic === 'string' && isPlainObject(data.input))
          runs.push({ runId: name.slice(0, -5), trigger: data.trigger, topic: data.topic, input: data.input })
      } catch {
        // A file torn by a crash in the middle of its first write (never renamed in place) cannot be here; anything
        // else unreadable is not ours to start.
      }
    }
    return runs
  }

  /** The run has ended (or exists in the store): nothing left to start for it. */
  done(runId: string): void {
    rmSync(join(this.pendingDir, `${runId}.json`), { force: true })
  }
}

function readSeen(file: string): Seen[] {
  try {
    const data = parseJson(readFileSync(file, 'utf8'), file)
    if (!Array.isArray(data)) return []
    return data.filter(
      (s): s is Seen =>
        isPlainObject(s) &&
        typeof s.trigger === 'string' &&
        typeof s.packetId === 'number' &&
        typeof s.digest === 'string' &&
        typeof s.run === 'string',
    )
  } catch {
    return []
  }
}

/** Replaces `file` whole and durably: written and fsync'd under another name, renamed, the folder fsync'd. */
function writeDurable(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`
  const fd = openSync(temporary, 'w', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temporary, file)
  const dir = openSync(join(file, '..'), 'r')
  try {
    fsyncSync(dir)
  } finally {
    closeSync(dir)
  }
}
