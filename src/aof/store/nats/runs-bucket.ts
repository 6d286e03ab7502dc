/**
 * The runs bucket `<p>_runs` (store.ts has the whole layout): a task's run files as JSON values — `<ID>.run`,
 * `.heartbeat`, `.result`, `.previous_result` — and the list of its companion files (`.files`), each packed as the
 * store packs every value (a `$ref` to the object store when oversized); and `_clock`, the probe whose server
 * timestamp is the store's "now".
 */

import { parseJsonOrUndefined } from '../../../core/json.ts'
import type { RunArtifact, RunHeartbeat, RunResult } from '../../protocol/schemas/run.ts'
import type { Lease } from '../../protocol/schemas/task.ts'
import { newRun, nextHeartbeat } from '../../protocol/lease.ts'
import { type KV, isConflict } from './client.ts'

export function runsBucket(runs: KV, pack: (text: string) => Promise<Uint8Array>, unpack: (bytes: Uint8Array) => Promise<string>) {
  /** The entry at `key` when it holds a value (not absent, deleted or empty). */
  async function valueAt(key: string) {
    const e = await runs.get(key)
    return e && e.operation === 'PUT' && e.length > 0 ? e : undefined
  }

  /** A value's JSON; undefined when it is not JSON (torn, or written by something else). */
  async function parse<T>(bytes: Uint8Array): Promise<T | undefined> {
    try {
      return parseJsonOrUndefined(await unpack(bytes)) as T | undefined
    } catch {
      return undefined
    }
  }

  async function readJson<T>(key: string): Promise<T | undefined> {
    const e = await valueAt(key)
    return e ? parse<T>(e.value) : undefined
  }

  const putJson = async (key: string, value: unknown) => runs.put(key, await pack(JSON.stringify(value)))
  const readHeartbeat = (id: string) => readJson<RunHeartbeat>(`${id}.heartbeat`)

  return {
    readJson,
    putJson,
    readRun: (id: string) => readJson<RunArtifact>(`${id}.run`),
    readHeartbeat,
    readResult: (id: string) => readJson<RunResult>(`${id}.result`),

    /** The server's time: the timestamp it gave a probe write. */
    async now(): Promise<Date> {
      await runs.put('_clock', '')
      const e = await runs.get('_clock')
      return e ? e.created : new Date()
    },

    /** Writes the run's heartbeat at server time `t`; the beat count goes on while the run is the same. */
    async beat(id: string, agent: string, runId: string | undefined, ttlMs: number, t: Date): Promise<RunHeartbeat> {
      const hb = nextHeartbeat(await readHeartbeat(id), id, agent, runId, ttlMs, t)
      await putJson(`${id}.heartbeat`, hb)
      return hb
    },

    /**
     * Moves `<ID>.result` to `<ID>.previous_result` (the filesystem's `previous_run_result.json`), when `stale` (if
     * given) says it is not the current run's. The delete is conditional on the revision read, so a result written
     * meanwhile — the current run's — is never the one removed. True when it was set aside.
     */
    async setAsideResult(id: string, stale?: (result: RunResult | undefined) => boolean): Promise<boolean> {
      const e = await valueAt(`${id}.result`)
      if (!e) return false
      if (stale && !stale(await parse<RunResult>(e.value))) return false
      await runs.put(`${id}.previous_result`, e.value)
      try {
        await runs.delete(`${id}.result`, { previousSeq: e.revision })
      } catch (err) {
        if (isConflict(err)) return false
        throw err
      }
      return true
    },
  }
}

/**
 * The run `agent`'s live lease belongs to. The lease names it (`runId`, written with the lease in one
 * compare-and-set) because the run entry is written after that: in between, another process of the same agent id
 * (a second board running the same agent) must see a run in progress, never a task it may lease afresh — which
 * would give the task two runs. A lease without `runId` (written before it was recorded) falls back to the run entry.
 */
export function ownRun(id: string, held: Lease, run: RunArtifact | undefined): RunArtifact | undefined {
  if (typeof held.runId === 'string') return run?.runId === held.runId ? run : newRun(id, held.agent, held.runId, held.acquiredAt, {})
  return run && run.agentId === held.agent && run.status === 'running' ? run : undefined
}
