/**
 * The `runs` database: run id → RunRecord. Ids are time-sortable, so key order is creation order.
 *
 * Reads see committed data only, so records written but not yet committed by this process are kept in `pending`
 * until their commit: `updateRun` right after `createRun` (same turn, not awaited) still merges correctly.
 */

import { TeaError } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'
import { MAX_STRING, type Kv } from './kv.ts'
import type { RunRecord, Store } from './types.ts'

type RunTable = Pick<Store, 'getRun' | 'updateRun' | 'listRuns' | 'claimRun'> & {
  /** Creates the record; `alongside` queues writes (the first snapshot) that commit with it, or not at all. */
  createRun(run: RunRecord, alongside?: () => void): Promise<void>
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

  async function write(run: RunRecord, noOverwrite = false, alongside?: () => void): Promise<boolean> {
    pending.set(run.id, run)
    try {
      const bytes = kv.encode(orderRun(run))
      if (!alongside) return await kv.put(run.id, bytes, { noOverwrite })
      return await kv.ifAbsent(run.id, () => {
        void kv.put(run.id, bytes) // settles with the block
        alongside()
      })
    } finally {
      if (pending.get(run.id) === run) pending.delete(run.id)
    }
  }

  return {
    async createRun(run, alongside) {
      const exists = () => new TeaError('RUN_EXISTS', `run ${run.id} already exists`, { details: { runId: run.id } })
      if (read(run.id)) throw exists()
      if (!(await write(run, true, alongside))) throw exists()
    },
    async getRun(id) {
      return read(id)
    },
    async updateRun(id, patch) {
      const run = read(id)
      if (!run) throw new TeaError('RUN_NOT_FOUND', `cannot update run ${id}: no such run`, { details: { runId: id } })
      await write({ ...run, ...patch, id })
    },
    async claimRun(id, take) {
      let taken: RunRecord | undefined
      kv.update(id, (bytes) => {
        // A write of this process still queued is newer than what is committed; it wins (it is ours).
        const current = pending.get(id) ?? (bytes && decodeRun(id, bytes))
        taken = { ...take(current), id }
        return kv.encode(orderRun(taken))
      })
      return taken!
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
