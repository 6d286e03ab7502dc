/**
 * How `tea serve` stops resuming a run that takes its process down (a `run:` node that eats all memory, a native
 * crash): each time it resumes a run by itself it first records, in the run's own record (`RunRecord.autoResume`),
 * how many times in a row the run's process has died with no node committed in between. Past `--resume-limit`
 * (default 3 resumes, so the 4th death) the run is failed with RESUME_LIMIT instead, and the service stays up.
 *
 * The count is kept in the store, not in memory, because the process that would keep it is the one that died. It
 * goes on only while the run's recorded owner is still the tea serve that resumed it and its checkpoint has not
 * moved: a node that committed since means the run was making progress (a power cut now and then does not fail a
 * long run), and another owner means a person resumed it (`tea resume`, or the API's resume, which clears it).
 */

import { TeaError } from '../../core/errors.ts'
import { selfIdentity } from '../../core/process.ts'
import { runningElsewhere } from '../../engine/lifecycle.ts'
import type { RunRecord, Store } from '../../store/types.ts'

/** Automatic resumes in a row of a run whose process died, before it is failed (docs/serve.md). */
export const DEFAULT_RESUME_LIMIT = 3

/**
 * How many times in a row the run's process has died so far, counting the death that left it (`crashed`: it was
 * left `running`; a run a shutdown stopped cleanly adds none). `step` is its latest checkpoint's step.
 */
export function deathsInARow(run: RunRecord, step: number, crashed: boolean): number {
  const a = run.autoResume
  const same = a !== undefined && a.pid === run.pid && a.pidStart === run.pidStart && a.step === step
  return (same ? a.deaths : 0) + (crashed ? 1 : 0)
}

/** Records the attempt about to start, and this process as the run's owner, in one transaction. */
export function markAutoResume(store: Store, runId: string, deaths: number, step: number): Promise<RunRecord> {
  const me = selfIdentity()
  const owner = { pid: me.pid, ...(me.startTicks !== undefined && { pidStart: me.startTicks }) }
  return store.claimRun(runId, (current) => ({
    ...stillOurs(current, runId),
    ...owner,
    autoResume: { deaths, step, ...owner },
  }))
}

/** A resume a person asked for (the API's): the count starts again. */
export async function clearAutoResume(store: Store, runId: string): Promise<void> {
  if (!(await store.getRun(runId))?.autoResume) return
  await store.claimRun(runId, (current) => {
    const { autoResume: _, ...rest } = stillOurs(current, runId)
    return rest
  })
}

/** Fails a run whose process died `deaths` times in a row (RESUME_LIMIT); `node` is the one in flight each time. */
export function failResumeLimit(store: Store, run: RunRecord, deaths: number, limit: number, node: string | undefined): Promise<RunRecord> {
  const where = node ? ` in node '${node}'` : ''
  const message =
    `its process died ${deaths} time${deaths === 1 ? '' : 's'} in a row while the run was in flight${where}, with no node finishing in between ` +
    `(tea serve resumes such a run at most ${limit} time${limit === 1 ? '' : 's'}: --resume-limit): it is not resumed by itself again; ` +
    `fix the cause (a node's memory: settings.run_memory_mb), then resume it by hand: tea resume ${run.id}`
  return store.claimRun(run.id, (current) => {
    const now = stillOurs(current, run.id)
    if (now.status !== run.status) throw new TeaError('RUN_NOT_RESUMABLE', `run ${run.id} changed while tea serve started`)
    return { ...now, status: 'failed', updatedAt: Date.now(), error: { code: 'RESUME_LIMIT', message, ...(node && { node }) } }
  })
}

function stillOurs(current: RunRecord | undefined, runId: string): RunRecord {
  if (!current) throw new TeaError('RUN_NOT_FOUND', `no run ${runId}`, { details: { runId } })
  if (current.status === 'completed' || runningElsewhere(current))
    throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} was taken by another process (pid ${current.pid})`, {
      details: { runId, pid: current.pid },
    })
  return current
}
