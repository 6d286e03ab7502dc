/**
 * The scheduler's pass on NATS (`tea aof poll --nats`; the port's `poll`), the JetStream side of the filesystem's
 * `fs/scheduler.ts` + `fs/lease-expiry.ts`.
 *
 * Staleness is judged by the **server's** clock (`ops.now()`, the timestamp of a probe write), never a board's: a
 * run whose heartbeat (`<ID>.heartbeat`, for the current run) expired, or — with no heartbeat of the current run —
 * whose lease expired. A stale run that wrote its result (the worker died between its result and its
 * compare-and-set) has that result applied, as the filesystem scheduler does (`stale_heartbeat_<outcome>`);
 * otherwise the task goes back to `ready` (`stale_heartbeat_reclaim` / `lease_expired`) and its run is marked
 * failed. Each recovery is one compare-and-set on the revision the staleness was decided on, so two schedulers —
 * or a scheduler and a late worker report — never both act on a task: reclaimed exactly once.
 */

import type { EventInput } from '../../protocol/events.ts'
import { DEFAULT_HEARTBEAT_TTL_MS, heartbeatExpiry } from '../../protocol/lease.ts'
import { completedRun, expiredRun, resultBelongsToRun } from '../../protocol/runs.ts'
import type { RunArtifact, RunHeartbeat } from '../../protocol/schemas/run.ts'
import type { PollOptions, PollResult, SchedulerAction } from '../../protocol/poll-result.ts'
import { TASK_STATUSES } from '../../protocol/status.ts'
import type { ReclaimedLease } from '../port.ts'
import { taskLease } from '../../protocol/task-file.ts'
import { ttlOption } from '../../protocol/ttl.ts'
import type { NatsOps } from './ops.ts'
import { outcomeEventId, outcomeMove } from './outcome.ts'

export async function natsPoll(ops: NatsOps, options: PollOptions = {}): Promise<PollResult> {
  const dryRun = options.dryRun ?? false
  const ttlMs = ttlOption('heartbeatTtlMs', options.heartbeatTtlMs, DEFAULT_HEARTBEAT_TTL_MS)
  const now = await ops.now()
  const all = await ops.list(TASK_STATUSES)
  const actions: SchedulerAction[] = []
  const setAside: string[] = []
  for (const listed of all.tasks) {
    if (listed.status !== 'in-progress') continue
    const action = await recover(ops, listed.id, now, ttlMs, dryRun)
    if (action) actions.push(action)
    // A result of an earlier run beside a live run: never applied by us, but the reference's session end would.
    if (!dryRun && (await setAsideStale(ops, listed.id))) setAside.push(listed.id)
  }
  const staleHeartbeats = actions.filter((a) => a.type === 'stale_heartbeat').length
  const leasesExpired = actions.length - staleHeartbeats
  const tasksEvaluated = all.tasks.length + all.problems.length
  const counts = { tasksEvaluated, actionsPlanned: actions.length, actionsExecuted: 0, staleHeartbeats, leasesExpired }
  await ops.appendEvents([{ type: 'scheduler.poll', actor: 'scheduler', payload: { dryRun, ...counts } }], now)
  return { dryRun, now: now.toISOString(), ...counts, actions, ...(setAside.length ? { resultsSetAside: setAside } : {}) }
}

/**
 * Sets aside the result of an earlier run found beside the task's live run (the filesystem's `setAsideIfStale`). A
 * task no longer in progress has no running run (a report, or the reclaim just before, completed or failed it).
 */
async function setAsideStale(ops: NatsOps, id: string): Promise<boolean> {
  const run = await ops.readRun(id)
  if (run?.status !== 'running') return false
  return ops.setAsideResult(id, (result) => result !== undefined && !resultBelongsToRun(result, run))
}

/** The leases the pass took back (the port's `reclaimExpired`). */
export async function natsReclaimExpired(ops: NatsOps): Promise<ReclaimedLease[]> {
  const { actions } = await natsPoll(ops)
  return actions
    .filter((a) => a.resolution === 'reclaimed')
    .map((a) => ({ taskId: a.taskId, agentId: a.agentId, ...(a.runId ? { runId: a.runId } : {}) }))
}

async function recover(ops: NatsOps, id: string, now: Date, ttlMs: number, dryRun: boolean): Promise<SchedulerAction | undefined> {
  for (;;) {
    const entry = await ops.read(id).catch(() => undefined) // an invalid entry is lint's to report
    if (!entry || entry.task.status !== 'in-progress') return undefined
    const { task, revision } = entry
    const run = await ops.readRun(id)
    const hb = ofRun(await ops.readHeartbeat(id), run)
    const lease = taskLease(task)
    const expiry = hb ? heartbeatExpiry(hb, ttlMs) : lease ? Date.parse(lease.expiresAt) : Number.POSITIVE_INFINITY
    if (expiry > now.getTime()) return undefined
    const runId = run?.runId ?? hb?.runId
    const action: SchedulerAction = {
      type: hb ? 'stale_heartbeat' : 'expired_lease',
      taskId: id,
      agentId: hb?.agentId ?? lease?.agent ?? run?.agentId ?? '',
      ...(runId ? { runId } : {}),
    }
    if (dryRun) return action
    const result = run?.status === 'running' ? await ops.readResult(id) : undefined
    if (run && result && resultBelongsToRun(result, run)) {
      const move = outcomeMove(ops, task, result, now, 'scheduler', 'stale_heartbeat_')
      if (!(await ops.cas(move.next, revision))) continue
      // The same `task.completed` (same id) the worker's report would have logged: one per run, whoever applies it.
      const completed: EventInput = {
        type: 'task.completed',
        actor: result.agentId,
        taskId: id,
        payload: { outcome: result.outcome, runId: result.runId },
      }
      await ops.appendEvents([...move.events, completed], now, [...move.ids, outcomeEventId(id, result.runId, 'completed')])
      await ops.putRunEntry(`${id}.run`, completedRun(run, now))
      return { ...action, resolution: 'applied_result', outcome: result.outcome, transitions: move.applied }
    }
    const reason = hb ? 'stale_heartbeat_reclaim' : 'lease_expired'
    if (!(await ops.cas(ops.moved(task, 'ready', now, { actor: 'scheduler', reason }), revision))) continue
    if (run) {
      await ops.putRunEntry(`${id}.run`, expiredRun(run, now, hb ? 'stale_heartbeat' : 'lease_expired'))
    }
    const event: EventInput = {
      type: 'task.transitioned',
      actor: 'scheduler',
      taskId: id,
      payload: { from: 'in-progress', to: 'ready', reason },
    }
    await ops.appendEvents([event], now)
    return { ...action, resolution: 'reclaimed', transitions: [{ from: 'in-progress', to: 'ready' }] }
  }
}

/**
 * The heartbeat if it belongs to the current run. One of an earlier run (a late beat of a reclaimed worker landing
 * after the new run's first one was due) says nothing about the current run: its lease decides instead.
 */
function ofRun(hb: RunHeartbeat | undefined, run: RunArtifact | undefined): RunHeartbeat | undefined {
  if (!hb || !run || hb.runId === undefined || run.runId === undefined) return hb
  return hb.runId === run.runId ? hb : undefined
}
