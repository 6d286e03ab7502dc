/**
 * Runs, plans and memory over the Kv slice of LMDB (kv.ts).
 *
 * - `runs`: run id → RunRecord. Ids are time-sortable, so key order is creation order.
 * - `plans`: `[runId, planId]` → `{no, header}`; `[no, subtaskId]` → subtask record (see createPlanTable). A
 *   plan's subtasks are one key range, and finishing a subtask writes that subtask's record only.
 * - `memory`: `[namespace, key]` → `{value, expiresAt?}`; an expired entry reads as absent and is deleted when
 *   met.
 *
 * Reads see committed data only, so records written but not yet committed by this process are kept in `pending`
 * until their commit, so that `updateRun` right after `createRun` (same turn, not awaited) still merges correctly.
 */

import { TeaError } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'
import { MAX_STRING, type Kv } from './kv.ts'
import type { RunRecord, Store } from './types.ts'

type RunTable = Pick<Store, 'createRun' | 'getRun' | 'updateRun' | 'listRuns'> & {
  remove(id: string): Promise<void>
}

export function createRunTable(kv: Kv): RunTable {
  const pending = new Map<string, RunRecord>()

  function read(id: string): RunRecord | undefined {
    const queued = pending.get(id)
    if (queued) return queued
    const bytes = kv.get(id)
    return bytes && decodeRun(id, bytes)
  }

  function decodeRun(id: string, bytes: Uint8Array): RunRecord {
    let run: unknown
    try {
      run = kv.decode(bytes)
    } catch (e) {
      run = e
    }
    if (!isPlainObject(run) || run.id !== id) {
      throw new TeaError('CHECKPOINT_CORRUPT', `the record of run ${id} is corrupt: it does not decode to a run`, {
        details: { runId: id },
        hint: 'delete the run with `tea runs prune`',
      })
    }
    return run as unknown as RunRecord
  }

  async function write(run: RunRecord, noOverwrite = false): Promise<boolean> {
    pending.set(run.id, run)
    try {
      return await kv.put(run.id, kv.encode(orderRun(run)), { noOverwrite })
    } finally {
      if (pending.get(run.id) === run) pending.delete(run.id)
    }
  }

  return {
    async createRun(run) {
      const exists = () => new TeaError('RUN_EXISTS', `run ${run.id} already exists`, { details: { runId: run.id } })
      if (read(run.id)) throw exists()
      if (!(await write(run, true))) throw exists()
    },
    async getRun(id) {
      return read(id)
    },
    async updateRun(id, patch) {
      const run = read(id)
      if (!run) throw new TeaError('RUN_NOT_FOUND', `cannot update run ${id}: no such run`, { details: { runId: id } })
      await write({ ...run, ...patch, id })
    },
    async listRuns() {
      const runs = new Map<string, RunRecord>()
      for (const { key, value } of kv.range('', MAX_STRING)) {
        if (typeof key === 'string') runs.set(key, decodeRun(key, value))
      }
      for (const [id, run] of pending) runs.set(id, run)
      return [...runs.keys()].sort().map((id) => runs.get(id)!)
    },
    async remove(id) {
      pending.delete(id)
      await kv.remove(id)
    },
  }
}

/** A fixed key order gives every run record the same msgpackr structure. */
function orderRun(r: RunRecord): RunRecord {
  const { id, agent, agentPath, agentHash, status, node, step, createdAt, updatedAt, error, ...rest } = r
  return { id, agent, agentPath, agentHash, status, node, step, createdAt, updatedAt, ...(error ? { error } : {}), ...rest }
}

type PlanTable = Pick<Store, 'putPlanHeader' | 'putSubtask' | 'getPlan'> & { removeRun(runId: string): Promise<void> }

/** Key of the plan-number counter; plan numbers start at 1, so no subtask key starts with it. */
const PLAN_COUNTER = 0

/**
 * Plans are written compactly because a plan may hold thousands of subtasks (SPEC §4: ≤ 40 B per subtask beyond
 * its text and result). The header, at `[runId, planId]`, holds `{no, header}`, where `no` is a number allocated
 * once per plan; subtask records sit at `[no, subtaskId]` (13 B of key for a 3-character id, instead of 29 with
 * the run id in front).
 */
export function createPlanTable(kv: Kv): PlanTable {
  /** `runId\0planId` → plan number, for plans this process wrote or read (their header may not have committed). */
  const numbers = new Map<string, number>()

  function decode(runId: string, planId: string, key: unknown, bytes: Uint8Array): Record<string, unknown> {
    let v: unknown
    try {
      v = kv.decode(bytes)
    } catch (e) {
      v = e
    }
    if (!isPlainObject(v)) {
      throw new TeaError('CHECKPOINT_CORRUPT', `plan ${planId} of run ${runId} has a corrupt record at ${JSON.stringify(key)}`, {
        details: { runId, planId },
      })
    }
    return v
  }

  function storedHeader(runId: string, planId: string): { no: number; header: Record<string, unknown> } | undefined {
    const bytes = kv.get([runId, planId])
    if (!bytes) return undefined
    const v = decode(runId, planId, [runId, planId], bytes)
    if (typeof v.no !== 'number' || !isPlainObject(v.header)) {
      throw new TeaError('CHECKPOINT_CORRUPT', `the header of plan ${planId} of run ${runId} is corrupt`, { details: { runId, planId } })
    }
    return { no: v.no, header: v.header }
  }

  /** The plan's number, allocating it (and writing an empty header) the first time the plan is seen. */
  function numberOf(runId: string, planId: string): { no: number; fresh?: Promise<boolean> } {
    const id = `${runId}\0${planId}`
    const known = numbers.get(id) ?? storedHeader(runId, planId)?.no
    if (known !== undefined) {
      numbers.set(id, known)
      return { no: known }
    }
    const no = kv.increment(PLAN_COUNTER)
    numbers.set(id, no)
    return { no, fresh: kv.put([runId, planId], kv.encode({ no, header: {} })) }
  }

  return {
    async putPlanHeader(runId, planId, header) {
      const { no } = numberOf(runId, planId)
      await kv.put([runId, planId], kv.encode({ no, header }))
    },
    async putSubtask(runId, planId, subtaskId, record) {
      const { no, fresh } = numberOf(runId, planId)
      await Promise.all([fresh, kv.put([no, subtaskId], kv.encode(record))])
    },
    async getPlan(runId, planId) {
      const stored = storedHeader(runId, planId)
      if (!stored) return undefined
      const subtasks = new Map<string, Record<string, unknown>>()
      for (const { key, value } of kv.range([stored.no, ''], [stored.no, MAX_STRING])) {
        const subtaskId = (key as [number, string])[1]
        subtasks.set(subtaskId, decode(runId, planId, key, value))
      }
      return { header: stored.header, subtasks }
    },
    async removeRun(runId) {
      const removals: Promise<boolean>[] = []
      for (const { key, value } of kv.range([runId, ''], [runId, MAX_STRING])) {
        removals.push(kv.remove(key))
        let no: unknown
        try {
          no = (kv.decode(value) as { no?: unknown }).no
        } catch {
          continue // a corrupt header: its subtasks stay behind, unreachable, rather than failing the delete
        }
        if (typeof no === 'number') for (const k of kv.keys([no, ''], [no, MAX_STRING])) removals.push(kv.remove(k))
        numbers.delete(`${runId}\0${(key as string[])[1]}`)
      }
      await Promise.all(removals)
    },
  }
}

type MemoryTable = Pick<Store, 'memoryPut' | 'memoryGet' | 'memoryDelete' | 'memoryList'>

export function createMemoryTable(kv: Kv, now: () => number): MemoryTable {
  /** The live entry at a key, or undefined when absent or expired. */
  function live(namespace: string, key: string, bytes: Uint8Array | undefined): { value: unknown } | undefined {
    if (!bytes) return undefined
    let entry: unknown
    try {
      entry = kv.decode(bytes)
    } catch (e) {
      entry = e
    }
    if (!isPlainObject(entry) || !('value' in entry)) {
      throw new TeaError('STORE_ERROR', `memory entry ${JSON.stringify(key)} in namespace ${JSON.stringify(namespace)} is corrupt`, {
        hint: 'delete it with memory.delete',
      })
    }
    if (typeof entry.expiresAt === 'number' && entry.expiresAt <= now()) {
      void kv.remove([namespace, key]).catch(() => {})
      return undefined
    }
    return { value: entry.value }
  }

  return {
    async memoryPut(namespace, key, value, ttlMs) {
      const entry = ttlMs === undefined ? { value } : { value, expiresAt: now() + ttlMs }
      await kv.put([namespace, key], kv.encode(entry))
    },
    async memoryGet(namespace, key) {
      const entry = live(namespace, key, kv.get([namespace, key]))
      return entry ? { found: true, value: entry.value } : { found: false }
    },
    async memoryDelete(namespace, key) {
      const existed = live(namespace, key, kv.get([namespace, key])) !== undefined
      await kv.remove([namespace, key])
      return existed
    },
    async memoryList(namespace, prefix = '') {
      const keys: string[] = []
      for (const { key, value } of kv.range([namespace, prefix], [namespace, prefix + MAX_STRING])) {
        const k = (key as string[])[1]!
        if (k.startsWith(prefix) && live(namespace, k, value)) keys.push(k)
      }
      return keys
    },
  }
}
