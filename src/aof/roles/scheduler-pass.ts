/**
 * The scheduler's pass (`tea aof poll`) on any store: stale runs reclaimed, or their written result applied, each
 * once. protocol/stale-run.ts holds the rules as values; this applies them over the port, each in-progress task one
 * unit of work (`withTask`): under its lock on the filesystem, a compare-and-set on the revision read on NATS, where a
 * lost race decides again on what is there now — so two schedulers, or a scheduler and a late worker report, never
 * both act on a task.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { parseJsonOrUndefined } from '../../core/json.ts'
import type { EventInput } from '../protocol/events.ts'
import { DEFAULT_HEARTBEAT_TTL_MS } from '../protocol/lease.ts'
import type { PollOptions, PollResult, SchedulerAction } from '../protocol/poll-result.ts'
import { outcomeSteps } from '../protocol/outcome.ts'
import { completedRun, expiredRun } from '../protocol/runs.ts'
import { RunHeartbeatSchema, RunResultSchema } from '../protocol/schemas/run.ts'
import { TASK_STATUSES } from '../protocol/status.ts'
import { isEarlierRunResult, outcomeEventId, resultToApply, staleOutcomeReason, staleRun } from '../protocol/stale-run.ts'
import { taskLease, taskMetadata } from '../protocol/task-file.ts'
import { ttlOption } from '../protocol/ttl.ts'
import type { ReclaimedLease, RunFileName, TaskStore } from '../store/port.ts'

/**
 * The scheduler's pass on `store` (protocol/stale-run.ts has the rules). Staleness is judged by
 * the store's clock (on NATS the server's) read once at the start. Each in-progress task is one unit of work
 * (`withTask`): under its lock on the filesystem, a compare-and-set on the revision read on NATS, where a lost race
 * decides again on what is there now — so two schedulers, or a scheduler and a late worker report, never both act
 * on a task. Recovery actions are not dispatch actions and do not count in `actionsExecuted`.
 */
export async function schedulerPass(store: TaskStore, options: PollOptions = {}): Promise<PollResult> {
  const dryRun = options.dryRun ?? false
  const ttlMs = ttlOption('heartbeatTtlMs', options.heartbeatTtlMs, DEFAULT_HEARTBEAT_TTL_MS)
  const now = await store.now()
  const all = await store.list(TASK_STATUSES)
  const actions: SchedulerAction[] = []
  const setAside: string[] = []
  for (const listed of all.tasks) {
    if (listed.status !== 'in-progress') continue
    const action = await recover(store, listed.id, now, ttlMs, dryRun)
    if (action) actions.push(action)
    // A result of an earlier run beside a live run: never applied by us, but the reference's session end would.
    if (!dryRun && (await store.setAsideResult(listed.id, isEarlierRunResult))) setAside.push(listed.id)
  }
  const staleHeartbeats = actions.filter((a) => a.type === 'stale_heartbeat').length
  const leasesExpired = actions.length - staleHeartbeats
  // Every task listed, in every status (and every entry that could not be read), as the reference counts them.
  const tasksEvaluated = all.tasks.length + all.problems.length
  const counts = { tasksEvaluated, actionsPlanned: actions.length, actionsExecuted: 0, staleHeartbeats, leasesExpired }
  await store.appendEvents([{ type: 'scheduler.poll', actor: 'scheduler', payload: { dryRun, ...counts } }])
  return { dryRun, now: now.toISOString(), ...counts, actions, ...(setAside.length ? { resultsSetAside: setAside } : {}) }
}

/** The leases a pass took back: what a worker's start asks for. */
export async function reclaimExpired(store: TaskStore): Promise<ReclaimedLease[]> {
  const { actions } = await schedulerPass(store)
  return actions
    .filter((a) => a.resolution === 'reclaimed')
    .map((a) => ({ taskId: a.taskId, agentId: a.agentId, ...(a.runId ? { runId: a.runId } : {}) }))
}

function recover(store: TaskStore, id: string, now: Date, ttlMs: number, dryRun: boolean): Promise<SchedulerAction | undefined> {
  return store.withTask(id, async (unit) => {
    if (!unit || unit.task.status !== 'in-progress') return undefined
    const run = await store.readRun(id)
    const stale = staleRun(unit.task, run, await readRunJson(store, id, 'run_heartbeat.json', RunHeartbeatSchema), now.getTime(), ttlMs)
    if (!stale) return undefined
    const { action, byHeartbeat } = stale
    if (dryRun) return action
    const result = resultToApply(run, await readRunJson(store, id, 'run_result.json', RunResultSchema))
    if (result) {
      const reason = staleOutcomeReason(result)
      const ids = (what: string) => outcomeEventId(id, result.runId, what)
      const { applied } = outcomeSteps({ status: unit.task.status, metadata: taskMetadata(unit.task) }, result.outcome)
      await unit.moves(applied.map(({ to }) => ({ to, options: { actor: 'scheduler', reason, eventId: ids(`to-${to}`) } })))
      // The same `task.completed` (same id) the worker's report would have logged: one per run, whoever applies it.
      const completed: EventInput = {
        type: 'task.completed',
        actor: result.agentId,
        taskId: id,
        payload: { outcome: result.outcome, ...(result.runId ? { runId: result.runId } : {}) },
        eventId: ids('completed'),
      }
      await store.appendEvents([completed])
      if (run) await writeRunJson(store, id, completedRun(run, now))
      return { ...action, resolution: 'applied_result', outcome: result.outcome, transitions: applied }
    }
    const reason = byHeartbeat ? 'stale_heartbeat_reclaim' : 'lease_expired'
    await unit.move('ready', { actor: 'scheduler', reason })
    if (run) await writeRunJson(store, id, expiredRun(run, now, byHeartbeat ? 'stale_heartbeat' : 'lease_expired'))
    return { ...action, resolution: 'reclaimed', transitions: [{ from: 'in-progress', to: 'ready' }] }
  })
}

/** A run file's value; undefined when absent, torn or not of its schema (as every reader of run files takes it). */
async function readRunJson<S extends v.GenericSchema>(store: TaskStore, id: string, name: RunFileName, schema: S) {
  const text = await store.readRunFile(id, name)
  const r = text === undefined ? undefined : v.safeParse(schema, parseJsonOrUndefined(text))
  return r?.success ? (r.output as v.InferOutput<S>) : undefined
}

function writeRunJson(store: TaskStore, id: string, run: unknown): Promise<void> {
  return store.writeRunFile(id, 'run.json', JSON.stringify(run, null, 2))
}
