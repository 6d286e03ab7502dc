/**
 * The store port held in process memory: for tests and for library use without a data dir. It keeps the same
 * semantics as the LMDB store (the contract suite runs against both): values are copied in and out, so a caller
 * mutating an object after `put` or after `get` never changes what is stored, and checkpoints follow the same
 * incremental log and retention rules (records.ts). Byte figures are JSON sizes, an estimate of the LMDB ones.
 */

import { TeaError } from '../core/errors.ts'
import {
  checkRecord,
  isSnapshot,
  replay,
  resolveKeep,
  snapshotRecord,
  stepRecord,
  type CheckpointRecord,
  type CheckpointStats,
} from './records.ts'
import { createCollectionTable } from './collections/index.ts'
import { memoryCollectionDbs } from './collections/memory-db.ts'
import type { RunRecord, Store, StoreOptions } from './types.ts'

interface RunLog {
  nextSeq: number
  /** seq → record and its byte estimate, in seq order. */
  records: Map<number, { record: CheckpointRecord; bytes: number }>
  stats: CheckpointStats
}

interface PlanEntry {
  header: Record<string, unknown>
  subtasks: Map<string, Record<string, unknown>>
}

/** A copy of a value being stored; values that cannot be stored fail as STORE_ERROR, as in the LMDB store. */
function storable<T>(value: T, what: string): T {
  try {
    return structuredClone(value)
  } catch (e) {
    throw new TeaError('STORE_ERROR', `${what} failed: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
      hint: 'store data only: objects, arrays, strings, numbers, booleans, null',
    })
  }
}

export function createMemoryStore(options: StoreOptions = {}): Store {
  const now = options.now ?? Date.now
  const runs = new Map<string, RunRecord>()
  const logs = new Map<string, RunLog>()
  const plans = new Map<string, Map<string, PlanEntry>>()
  const memory = new Map<string, Map<string, { value: unknown; expiresAt?: number }>>()
  let closed = false

  function open(): void {
    if (closed) throw new TeaError('STORE_ERROR', 'the memory store was used after close()')
  }

  function logOf(runId: string): RunLog {
    let log = logs.get(runId)
    if (!log) {
      log = { nextSeq: 0, records: new Map(), stats: { updateBytes: 0, snapshotBytes: 0, updates: 0 } }
      logs.set(runId, log)
    }
    return log
  }

  function append(runId: string, record: CheckpointRecord): RunLog {
    const log = logOf(runId)
    const stored = storable(record, `checkpoint of run ${runId}`)
    const bytes = Buffer.byteLength(JSON.stringify(stored)) + runId.length + 10
    log.records.set(log.nextSeq++, { record: stored, bytes })
    if (isSnapshot(stored)) log.stats = { updateBytes: 0, snapshotBytes: bytes, updates: 0 }
    else log.stats = { ...log.stats, updateBytes: log.stats.updateBytes + bytes, updates: log.stats.updates + 1 }
    return log
  }

  // A subtask may be written before its header has committed (both are queued in one turn), so neither write
  // requires the other; a plan with subtasks but no header reads back with an empty header.
  function planEntry(runId: string, planId: string): PlanEntry {
    let byPlan = plans.get(runId)
    if (!byPlan) plans.set(runId, (byPlan = new Map()))
    let entry = byPlan.get(planId)
    if (!entry) byPlan.set(planId, (entry = { header: {}, subtasks: new Map() }))
    return entry
  }

  const store: Store = {
    async createRun(run, first) {
      open()
      if (runs.has(run.id)) throw new TeaError('RUN_EXISTS', `run ${run.id} already exists`, { details: { runId: run.id } })
      runs.set(run.id, storable(run, `createRun ${run.id}`))
      if (first) await store.snapshot(run.id, first)
    },
    async getRun(id) {
      open()
      const run = runs.get(id)
      return run && structuredClone(run)
    },
    async updateRun(id, patch) {
      open()
      const run = runs.get(id)
      if (!run) throw new TeaError('RUN_NOT_FOUND', `cannot update run ${id}: no such run`, { details: { runId: id } })
      runs.set(id, { ...run, ...storable(patch, `updateRun ${id}`), id })
    },
    async claimRun(id, take) {
      open()
      const current = runs.get(id)
      const taken = storable({ ...take(current && structuredClone(current)), id }, `claimRun ${id}`)
      runs.set(id, taken)
      return structuredClone(taken)
    },
    async listRuns() {
      open()
      return [...runs.keys()].sort().map((id) => structuredClone(runs.get(id)!))
    },
    async deleteRun(id) {
      open()
      runs.delete(id)
      logs.delete(id)
      plans.delete(id)
    },

    async appendStep(runId, entry) {
      open()
      append(runId, stepRecord(entry))
    },
    async snapshot(runId, entry, keep) {
      open()
      const k = resolveKeep(keep, options.keepSnapshots)
      const log = append(runId, snapshotRecord(entry))
      const snapshots = [...log.records].filter(([, r]) => isSnapshot(r.record)).map(([seq]) => seq)
      const oldestKept = snapshots[Math.max(0, snapshots.length - k)]!
      for (const seq of log.records.keys()) if (seq < oldestKept) log.records.delete(seq)
    },
    async loadLatest(runId) {
      open()
      const log = logs.get(runId)
      if (!log) return undefined
      const entries = [...log.records]
      let start = 0
      for (let i = entries.length - 1; i >= 0; i--) {
        if (isSnapshot(entries[i]![1].record)) {
          start = i
          break
        }
      }
      const records = entries.slice(start).map(([seq, r]) => checkRecord(runId, seq, structuredClone(r.record)))
      return replay(records)
    },
    async checkpointBytes(runId) {
      open()
      let total = 0
      for (const r of logs.get(runId)?.records.values() ?? []) total += r.bytes
      return total
    },
    checkpointStats(runId) {
      const stats = logs.get(runId)?.stats
      return stats ? { ...stats } : { updateBytes: 0, snapshotBytes: 0, updates: 0 }
    },

    async putPlanHeader(runId, planId, header) {
      open()
      planEntry(runId, planId).header = storable(header, `plan ${planId} of run ${runId}`)
    },
    async putSubtask(runId, planId, subtaskId, record) {
      open()
      planEntry(runId, planId).subtasks.set(subtaskId, storable(record, `subtask ${subtaskId} of plan ${planId}`))
    },
    async getPlan(runId, planId) {
      open()
      const entry = plans.get(runId)?.get(planId)
      if (!entry) return undefined
      const ids = [...entry.subtasks.keys()].sort()
      return {
        header: structuredClone(entry.header),
        subtasks: new Map(ids.map((id) => [id, structuredClone(entry.subtasks.get(id)!)])),
      }
    },

    async memoryPut(namespace, key, value, ttlMs) {
      open()
      let ns = memory.get(namespace)
      if (!ns) memory.set(namespace, (ns = new Map()))
      const stored = storable(value, `memory put ${namespace}/${key}`)
      ns.set(key, ttlMs === undefined ? { value: stored } : { value: stored, expiresAt: now() + ttlMs })
    },
    async memoryGet(namespace, key) {
      open()
      const entry = memory.get(namespace)?.get(key)
      if (!entry || (entry.expiresAt !== undefined && entry.expiresAt <= now())) return { found: false }
      return { found: true, value: structuredClone(entry.value) }
    },
    async memoryDelete(namespace, key) {
      open()
      const ns = memory.get(namespace)
      const entry = ns?.get(key)
      if (!entry) return false
      ns!.delete(key)
      return entry.expiresAt === undefined || entry.expiresAt > now()
    },
    async memoryList(namespace, prefix = '') {
      open()
      const t = now()
      const keys: string[] = []
      for (const [key, entry] of memory.get(namespace) ?? []) {
        if (key.startsWith(prefix) && (entry.expiresAt === undefined || entry.expiresAt > t)) keys.push(key)
      }
      return keys.sort()
    },

    ...whileOpen(createCollectionTable(memoryCollectionDbs(), now), open),

    async flush() {},
    async close() {
      closed = true
    },
  }
  return store
}

/** The table's methods, each refusing once the store is closed, as the store's own do. */
function whileOpen<T extends object>(table: T, open: () => void): T {
  const wrapped = {} as Record<string, unknown>
  for (const [name, fn] of Object.entries(table)) {
    wrapped[name] = async (...args: unknown[]) => {
      open()
      return (fn as (...a: unknown[]) => unknown)(...args)
    }
  }
  return wrapped as T
}
