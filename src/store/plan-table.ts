/**
 * The `plans` database: one header per plan and one record per subtask, so finishing a subtask writes that
 * subtask's record only (layout in createPlanTable).
 */

import { TeaError } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'
import { MAX_STRING, type Kv } from './kv.ts'
import type { Store } from './types.ts'

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
