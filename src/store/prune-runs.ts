/**
 * `tea runs prune`: deletes old runs with their checkpoints and plans.
 *
 * Only runs that are not `running` are candidates (completed, failed, cancelled, interrupted). A `running` run may
 * belong to a live process, or to one that crashed and is waiting for `tea resume`; neither should vanish under a
 * prune, so it is never deleted here — `tea runs` shows it, and a user who is sure can resume it and let it end.
 * Among the candidates, a run is deleted when it is outside the newest `keep` runs (counted over all runs, so
 * `--keep 5` leaves at most five runs plus any running ones) and, when `olderThanMs` is given, last updated before
 * `now - olderThanMs`. With neither option every finished run goes.
 */

import { TeaError } from '../core/errors.ts'
import type { RunRecord, Store } from './types.ts'

export interface PruneOptions {
  /** Keep this many newest runs, whatever their status. */
  keep?: number
  /** Delete only runs last updated longer ago than this. */
  olderThanMs?: number
  /** The clock (tests); default Date.now(). */
  now?: number
}

/** The runs, oldest first by creation time (ids given with --run-id need not sort by time). */
export async function runsByCreation(store: Store): Promise<RunRecord[]> {
  return (await store.listRuns()).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
}

/** Returns the ids deleted, oldest first. */
export async function pruneRuns(store: Store, options: PruneOptions = {}): Promise<string[]> {
  const { keep = 0, olderThanMs, now = Date.now() } = options
  if (!Number.isInteger(keep) || keep < 0) {
    throw new TeaError('USAGE', `--keep must be a whole number ≥ 0, got ${String(keep)}`)
  }
  if (olderThanMs !== undefined && !(olderThanMs >= 0)) {
    throw new TeaError('USAGE', `--older-than must be a duration ≥ 0, got ${String(olderThanMs)} ms`)
  }
  const runs = await runsByCreation(store)
  const protectedFrom = runs.length - keep
  const doomed = runs.filter(
    (run, i) => i < protectedFrom && run.status !== 'running' && (olderThanMs === undefined || run.updatedAt < now - olderThanMs),
  )
  for (const run of doomed) await store.deleteRun(run.id)
  return doomed.map((run) => run.id)
}
