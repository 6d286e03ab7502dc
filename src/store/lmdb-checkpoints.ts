/**
 * The checkpoint log of the LMDB store. Keys are `[runId, seq]`, so one run's records are one contiguous, ordered
 * range; values are msgpackr step or snapshot records (records.ts). Per run, this process keeps in memory the next
 * `seq`, the `seq`s of the kept snapshots and the byte counts since the newest one, so appending and retention
 * never read the log; the first touch of a run (a resume) scans its range once to rebuild them. That assumes one
 * writer per run (the process running it; worker threads write plan records, not checkpoints).
 *
 * Retention deletes keys by number (`floor … oldestKept-1`) in the same transaction as the snapshot that made them
 * obsolete, so a crash leaves either the old log or the new one, never a log without its snapshot.
 */

import type { Kv } from './kv.ts'
import {
  checkRecord,
  isSnapshot,
  replay,
  resolveKeep,
  snapshotRecord,
  stepRecord,
  sealRecord,
  undecodable,
  unsealRecord,
  type CheckpointRecord,
  type CheckpointStats,
} from './records.ts'
import type { LoadedCheckpoint, SnapshotEntry, StepEntry } from './types.ts'

interface RunLog {
  nextSeq: number
  /** Lowest seq that may still exist: retention deletes from here. */
  floor: number
  /** Seqs of the snapshots still held, oldest first. */
  snapshots: number[]
  keyBytes: number
  stats: CheckpointStats
}

export interface CheckpointLog {
  append(runId: string, entry: StepEntry): Promise<void>
  snapshot(runId: string, entry: SnapshotEntry, keep: number | undefined): Promise<void>
  /**
   * The snapshot encoded now, written when the returned function is called: what runs inside an lmdb transaction
   * callback (a run's first snapshot, queued with its record) must not encode there, where a throw escapes lmdb
   * as an uncaught error and takes the process down.
   */
  prepareSnapshot(runId: string, entry: SnapshotEntry, keep: number | undefined): () => Promise<void>
  loadLatest(runId: string): LoadedCheckpoint | undefined
  bytes(runId: string): number
  stats(runId: string): CheckpointStats
  /** Removes the run's records (they must have committed) and forgets its figures. */
  drop(runId: string): Promise<void>
  /** Forgets the run's figures (read again from the store when next asked), e.g. after a write that did not happen. */
  forget(runId: string): void
}

export function createCheckpointLog(kv: Kv, defaultKeep: number | undefined): CheckpointLog {
  const logs = new Map<string, RunLog>()

  function logOf(runId: string): RunLog {
    let log = logs.get(runId)
    if (!log) logs.set(runId, (log = scan(runId)))
    return log
  }

  function scan(runId: string): RunLog {
    const log: RunLog = {
      nextSeq: 0,
      floor: 0,
      snapshots: [],
      keyBytes: kv.keyBytes([runId, 0]),
      stats: { updateBytes: 0, snapshotBytes: 0, updates: 0 },
    }
    let first = true
    for (const { key, value } of kv.range([runId, 0], [runId, Infinity])) {
      const seq = (key as [string, number])[1]
      if (first) log.floor = seq
      first = false
      log.nextSeq = seq + 1
      // A record that does not decode counts as an update here; loadLatest reports it when it reaches it.
      const bytes = log.keyBytes + value.length
      if (snapshotAt(runId, seq, value)) {
        log.snapshots.push(seq)
        log.stats = { updateBytes: 0, snapshotBytes: bytes, updates: 0 }
      } else {
        log.stats.updateBytes += bytes
        log.stats.updates++
      }
    }
    return log
  }

  function snapshotAt(runId: string, seq: number, value: Uint8Array): boolean {
    try {
      return isSnapshot(checkRecord(runId, seq, kv.decode(unsealRecord(runId, seq, value))))
    } catch {
      return false
    }
  }

  function write(runId: string, log: RunLog, record: CheckpointRecord): { seq: number; bytes: number; done: Promise<boolean> } {
    return queue(runId, log, encode(record))
  }

  /** Encoding may throw (a value msgpackr cannot pack), so it comes first: a failed encode must not use up a seq. */
  function encode(record: CheckpointRecord): Uint8Array {
    return sealRecord(kv.encode(record))
  }

  function queue(runId: string, log: RunLog, value: Uint8Array): { seq: number; bytes: number; done: Promise<boolean> } {
    const seq = log.nextSeq++
    return { seq, bytes: log.keyBytes + value.length, done: kv.put([runId, seq], value) }
  }

  function prepareSnapshot(runId: string, entry: SnapshotEntry, keep: number | undefined): () => Promise<void> {
    const value = encode(snapshotRecord(entry))
    return async () => {
      const k = resolveKeep(keep, defaultKeep)
      const log = logOf(runId)
      const { seq, bytes, done } = queue(runId, log, value)
      log.snapshots.push(seq)
      log.stats = { updateBytes: 0, snapshotBytes: bytes, updates: 0 }
      if (log.snapshots.length > k) log.snapshots.splice(0, log.snapshots.length - k)
      const oldestKept = log.snapshots[0]!
      // Queued in the same event turn as the snapshot's put, so lmdb commits them in the same transaction.
      const removals: Promise<boolean>[] = []
      for (let s = log.floor; s < oldestKept; s++) removals.push(kv.remove([runId, s]))
      log.floor = Math.max(log.floor, oldestKept)
      await Promise.all([done, ...removals])
    }
  }

  return {
    async append(runId, entry) {
      const log = logOf(runId)
      const { bytes, done } = write(runId, log, stepRecord(entry))
      log.stats.updateBytes += bytes
      log.stats.updates++
      await done
    },

    snapshot(runId, entry, keep) {
      return prepareSnapshot(runId, entry, keep)()
    },

    prepareSnapshot,

    loadLatest(runId) {
      const newestFirst: CheckpointRecord[] = []
      for (const { key, value } of kv.range([runId, Infinity], [runId, -1], true)) {
        const seq = (key as [string, number])[1]
        const bytes = unsealRecord(runId, seq, value)
        let decoded: unknown
        try {
          decoded = kv.decode(bytes)
        } catch (e) {
          throw undecodable(runId, seq, e)
        }
        const record = checkRecord(runId, seq, decoded)
        newestFirst.push(record)
        if (isSnapshot(record)) break
      }
      return replay(newestFirst.reverse())
    },

    bytes(runId) {
      let total = 0
      const keyBytes = logOf(runId).keyBytes
      for (const { value } of kv.range([runId, 0], [runId, Infinity])) total += keyBytes + value.length
      return total
    },

    stats(runId) {
      return { ...logOf(runId).stats }
    },

    forget(runId) {
      logs.delete(runId)
    },

    async drop(runId) {
      logs.delete(runId)
      const removals: Promise<boolean>[] = []
      for (const key of kv.keys([runId, -1], [runId, Infinity])) removals.push(kv.remove(key))
      await Promise.all(removals)
    },
  }
}
