/**
 * Checkpoint record shapes and the rules both store implementations share.
 *
 * A run's checkpoint log is a sequence of records numbered by `seq` (0, 1, 2 … per run, in write order). A record
 * is either a *step* (`{step, node, update, cursor}`: one node's update) or a *snapshot* (`{step, node, state,
 * cursor}`: the whole state). The state at the end of the log is the newest snapshot with every later step's update
 * shallow-merged onto it in `seq` order; the cursor is the last record's. Retention keeps the newest `keep`
 * snapshots and drops every record older than the oldest of them, so the log never grows without bound.
 *
 * Records are built here with a fixed key order, so that msgpackr shares one structure per record shape.
 */

import { TeaError } from '../core/errors.ts'
import { isPlainObject, type State } from '../core/util.ts'
import type { Cursor, LoadedCheckpoint, SnapshotEntry, StepEntry } from './types.ts'

export const DEFAULT_KEEP_SNAPSHOTS = 3

export interface StepRecord {
  step: number
  node: string
  update: State
  cursor: Cursor
}

export interface SnapshotRecord {
  step: number
  node: string | null
  state: State
  cursor: Cursor
}

export type CheckpointRecord = StepRecord | SnapshotRecord

/** Bytes held for a run's checkpoints, split the way the engine's snapshot decision needs them. */
export interface CheckpointStats {
  /** Bytes of the step records written since the newest snapshot. */
  updateBytes: number
  /** Bytes of the newest snapshot (0 when there is none yet). */
  snapshotBytes: number
  /** Number of step records since the newest snapshot. */
  updates: number
}

/**
 * The engine's rule for when to snapshot (SPEC §3.6): once the updates since the last snapshot outweigh the
 * snapshot itself, replaying them costs more than writing the state again. With no snapshot yet, always.
 */
export function snapshotDue(stats: CheckpointStats | undefined): boolean {
  return !stats || stats.snapshotBytes === 0 || stats.updateBytes > stats.snapshotBytes
}

export function resolveKeep(keep: number | undefined, fallback: number | undefined): number {
  const k = keep ?? fallback ?? DEFAULT_KEEP_SNAPSHOTS
  if (!Number.isInteger(k) || k < 1) {
    throw new TeaError('STORE_ERROR', `checkpoint keep must be an integer ≥ 1, got ${String(k)}`, {
      hint: 'set settings.checkpoint.keep to 1 or more',
    })
  }
  return k
}

function cursorRecord(cursor: Cursor): Cursor {
  return cursor.skipInterruptBefore ? { next: cursor.next, skipInterruptBefore: true } : { next: cursor.next }
}

export function stepRecord(entry: StepEntry): StepRecord {
  return { step: entry.step, node: entry.node, update: entry.update, cursor: cursorRecord(entry.cursor) }
}

export function snapshotRecord(entry: SnapshotEntry): SnapshotRecord {
  return { step: entry.step, node: entry.node, state: entry.state, cursor: cursorRecord(entry.cursor) }
}

export function isSnapshot(record: CheckpointRecord): record is SnapshotRecord {
  return 'state' in record
}

function corrupt(runId: string, seq: number, why: string, cause?: unknown): TeaError {
  return new TeaError('CHECKPOINT_CORRUPT', `checkpoint record ${seq} of run ${runId} is corrupt: ${why}`, {
    cause,
    details: { runId, seq },
    hint: `the run cannot be resumed from this record; delete it with \`tea runs prune\` or start a new run`,
  })
}

/**
 * Checks that a decoded value has a checkpoint record's shape. Garbage bytes often decode to *something* (a
 * number, a string), so a decode that did not throw proves nothing; the shape check is what catches them.
 */
export function checkRecord(runId: string, seq: number, value: unknown): CheckpointRecord {
  if (!isPlainObject(value)) return fail('expected a record object, got ' + describe(value))
  const { step, node, cursor } = value
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0) return fail('bad step ' + describe(step))
  if (!(typeof node === 'string' || (node === null && 'state' in value))) return fail('bad node ' + describe(node))
  if (!isPlainObject(cursor) || typeof cursor.next !== 'string') return fail('bad cursor ' + describe(cursor))
  const body = 'state' in value ? value.state : value.update
  if (!isPlainObject(body)) return fail(('state' in value ? 'state' : 'update') + ' is ' + describe(body))
  return value as unknown as CheckpointRecord

  function fail(why: string): never {
    throw corrupt(runId, seq, why)
  }
}

/** Wraps a decoder failure (truncated or garbage bytes) as CHECKPOINT_CORRUPT. */
/**
 * Checkpoint records carry a CRC-32 of their msgpack bytes, so a flipped byte inside a value is CHECKPOINT_CORRUPT
 * instead of a resumed, silently different state: `0xc1` (a byte msgpack never uses) + the CRC (4 bytes, LE) + the
 * bytes. Records written before checksums start with another byte and are read as they are.
 */
const SEALED = 0xc1

export function sealRecord(bytes: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(bytes.length + 5)
  out[0] = SEALED
  out.writeUInt32LE(crc32(bytes), 1)
  out.set(bytes, 5)
  return out
}

/** The msgpack bytes of a stored record, after checking its CRC (CHECKPOINT_CORRUPT when it does not match). */
export function unsealRecord(runId: string, seq: number, stored: Uint8Array): Uint8Array {
  if (stored[0] !== SEALED) return stored
  if (stored.length < 5) throw corrupt(runId, seq, `it is ${stored.length} bytes, too short to hold its checksum`)
  const bytes = stored.subarray(5)
  const expected = Buffer.from(stored.buffer, stored.byteOffset + 1, 4).readUInt32LE(0)
  if (crc32(bytes) !== expected) throw corrupt(runId, seq, 'its checksum does not match its bytes (the file was damaged on disk)')
  return bytes
}

let table: Uint32Array | undefined

/** CRC-32 (IEEE), table-driven: `zlib.crc32` only arrived in Node 20.15, and the armv7 build runs Node 20.11. */
function crc32(bytes: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      table[n] = c >>> 0
    }
  }
  let crc = 0xffffffff
  for (let i = 0; i < bytes.length; i++) crc = table[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

export function undecodable(runId: string, seq: number, cause: unknown): TeaError {
  return corrupt(runId, seq, 'its bytes cannot be decoded (' + (cause instanceof Error ? cause.message : String(cause)) + ')', cause)
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`
}

/**
 * Rebuilds the state from records in `seq` order that start at a snapshot (or at the first record when the log
 * holds no snapshot: the base is then `{}`). The returned state is a fresh object.
 */
export function replay(records: readonly CheckpointRecord[]): LoadedCheckpoint | undefined {
  const last = records[records.length - 1]
  if (!last) return undefined
  let state: State = {}
  for (const r of records) {
    if (isSnapshot(r)) state = { ...r.state }
    else Object.assign(state, r.update)
  }
  return { step: last.step, node: last.node, state, cursor: { ...last.cursor } }
}
