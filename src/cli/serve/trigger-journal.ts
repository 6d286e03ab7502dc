/**
 * What tea serve's MQTT triggers have taken from the broker, on disk, so that each message starts exactly one run
 * across a kill, a power cut and a broker restart.
 *
 * MQTT's QoS 1 is at-least-once: the broker sends a message again (the DUP flag set, the same packet id) on the
 * next connection of the session when it has not seen the client's PUBACK. So a message is written down here —
 * flushed to the disk — *before* it is acknowledged, and a run is started from what was written:
 * - killed before the write: no PUBACK went out; the broker sends the message again and it is taken then;
 * - killed after the write: the message's run is pending here, and the next start starts it (or finds it in the
 *   store, started, and leaves it to the resume of unfinished runs) — and if the PUBACK was lost with the process,
 *   the broker's second copy (DUP, the same packet id, topic and payload) is recognised and acknowledged without a
 *   second run.
 *
 * The last SEEN_KEPT messages taken are remembered for that: a broker re-sends only what is in flight, at most its
 * in-flight window (mosquitto's max_inflight_messages, 20 by default). A first delivery never carries DUP, so a new
 * message that repeats an old one's packet id, topic and payload is never mistaken for it — except in one case:
 * when tea was killed between receiving it and writing it here (milliseconds) and its second copy (DUP) then
 * matches an entry still kept. With mosquitto, which numbers packet ids in turn, that needs 65,535 messages in
 * between; a broker that reuses ids at once could drop such a repeated message.
 *
 * The file, `<data-dir>/serve-mqtt/journal.ndjson`, is one JSON object a line, appended: `{"take": {"runId",
 * "trigger", "topic", "input"}, "key"?: {"trigger", "packetId", "digest"}}` when a message is taken (flushed with
 * fdatasync before the PUBACK: one flush a message), `{"done": "<run id>"}` when its run has ended in this process
 * (not flushed: a `done` lost to a power cut only means the next start finds the run in the store). A line torn by a
 * crash was never flushed, so its message was never acknowledged: it is skipped. Each start rewrites the file with
 * what is still pending and remembered (a temporary file renamed over it), and so does a process whose file has
 * grown past COMPACT_LINES or COMPACT_BYTES.
 */

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { parseJsonOrUndefined } from '../../core/json.ts'
import { isPlainObject, type State } from '../../core/util.ts'

/** Messages remembered for recognising a broker's second copy: well above any broker's in-flight window. */
const SEEN_KEPT = 256
/** Lines, or bytes (payloads reach 1 MiB), appended before the file is rewritten with only what is still needed. */
const COMPACT_LINES = 10_000
const COMPACT_BYTES = 8 * 2 ** 20

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
  private readonly file: string
  private readonly pendingRuns = new Map<string, PendingRun>()
  private seen: Seen[] = []
  /** The file opened for appending, once (a promise: several appends may ask for it before it is open). */
  private handle: Promise<FileHandle> | undefined
  private lines = 0
  private bytes = 0

  constructor(dataDir: string) {
    const dir = join(dataDir, 'serve-mqtt')
    mkdirSync(dir, { recursive: true })
    this.file = join(dir, 'journal.ndjson')
    this.read()
    this.rewrite()
  }

  /** The run a message with this key started, when one did (a second copy of it). */
  runOf(key: MessageKey): string | undefined {
    return this.seen.findLast((s) => s.trigger === key.trigger && s.packetId === key.packetId && s.digest === key.digest)?.run
  }

  /** Writes a taken message down, flushed, before it is acknowledged; `key` absent for QoS 0 (never sent twice). */
  async take(run: PendingRun, key?: MessageKey): Promise<void> {
    this.pendingRuns.set(run.runId, run)
    if (key) this.remember({ ...key, run: run.runId })
    const handle = await this.appender()
    const line = `${JSON.stringify({ take: run, ...(key && { key }) })}\n`
    await handle.appendFile(line)
    await handle.datasync()
    this.bytes += line.length
    if (++this.lines > COMPACT_LINES || this.bytes > COMPACT_BYTES) await this.compact()
  }

  /** The runs written down whose end this process has not seen, oldest first. */
  pending(): PendingRun[] {
    return [...this.pendingRuns.values()]
  }

  /** The run has ended (or exists in the store): nothing left to start for it. */
  done(runId: string): void {
    if (!this.pendingRuns.delete(runId)) return
    // Not awaited, not flushed (above); the order of appends on one handle is kept.
    this.appender()
      .then((h) => h.appendFile(`${JSON.stringify({ done: runId })}\n`))
      .catch(() => {})
    this.lines++
  }

  async close(): Promise<void> {
    const handle = this.handle
    this.handle = undefined
    await (await handle)?.close()
  }

  // --- internal ---

  private remember(seen: Seen): void {
    this.seen = [...this.seen.filter((s) => !(s.trigger === seen.trigger && s.packetId === seen.packetId)), seen]
    if (this.seen.length > SEEN_KEPT) this.seen = this.seen.slice(-SEEN_KEPT)
  }

  private appender(): Promise<FileHandle> {
    this.handle ??= open(this.file, 'a', 0o600)
    return this.handle
  }

  private read(): void {
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch {
      return
    }
    for (const line of text.split('\n')) {
      const entry = parseJsonOrUndefined(line)
      if (!isPlainObject(entry)) continue // a torn last line: never flushed, never acknowledged
      if (typeof entry.done === 'string') this.pendingRuns.delete(entry.done)
      const take = entry.take
      if (
        isPlainObject(take) &&
        typeof take.runId === 'string' &&
        typeof take.trigger === 'string' &&
        typeof take.topic === 'string' &&
        isPlainObject(take.input)
      ) {
        this.pendingRuns.set(take.runId, { runId: take.runId, trigger: take.trigger, topic: take.topic, input: take.input })
        const key = entry.key
        if (isPlainObject(key) && typeof key.trigger === 'string' && typeof key.packetId === 'number' && typeof key.digest === 'string')
          this.remember({ trigger: key.trigger, packetId: key.packetId, digest: key.digest, run: take.runId })
      }
    }
  }

  /** Replaces the file with what is still needed: the pending runs and the messages remembered. */
  private rewrite(): void {
    // In the order remembered (the newest last); an ended run's take is kept as a stub followed by its done.
    const keyed = new Set(this.seen.map((s) => s.run))
    const lines: unknown[] = []
    for (const s of this.seen) {
      const key = { trigger: s.trigger, packetId: s.packetId, digest: s.digest }
      const run = this.pendingRuns.get(s.run)
      if (run) lines.push({ take: run, key })
      else lines.push({ take: { runId: s.run, trigger: s.trigger, topic: '', input: {} }, key }, { done: s.run })
    }
    for (const run of this.pending()) if (!keyed.has(run.runId)) lines.push({ take: run })
    const temporary = `${this.file}.${process.pid}.tmp`
    const fd = openSync(temporary, 'w', 0o600)
    try {
      writeSync(fd, lines.map((l) => `${JSON.stringify(l)}\n`).join(''))
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(temporary, this.file)
    const dir = openSync(join(this.file, '..'), 'r')
    try {
      fsyncSync(dir)
    } finally {
      closeSync(dir)
    }
    this.lines = lines.length
    this.bytes = 0
  }

  private async compact(): Promise<void> {
    await this.close()
    this.rewrite()
  }
}
