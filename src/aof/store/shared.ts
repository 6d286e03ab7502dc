/**
 * What both task stores decide alike and neither owns: whether an agent still holds a task, which of two copies of a
 * task an import keeps, what a companion-file path may be, and the scheduler's pass. The two backends (fs/, nats/)
 * never import each other; what they share is here, beside the port.
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
import { type Task, taskLease, taskMetadata } from '../protocol/task-file.ts'
import { ttlOption } from '../protocol/ttl.ts'
import type { ReclaimedLease, RunFileName, TaskStore } from './port.ts'

/** The task if `agent` holds its lease in progress; AOF_LOCKED (lost) otherwise.  */
export function holdingTask(task: Task | undefined, id: string, agent: string): Task {
  if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found`)
  const lease = taskLease(task)
  if (task.status !== 'in-progress' || lease?.agent !== agent) {
    throw new TeaError('AOF_LOCKED', `${agent} no longer holds ${id} (status ${task.status}, lease ${lease?.agent ?? 'none'})`, {
      details: { lost: true },
    })
  }
  return task
}

/** What writing `incoming` over `existing` does, by `updatedAt` (both stores decide the same way). */
export function compareStamps(existing: Task | undefined, incoming: Task): 'created' | 'replaced' | 'same' | 'kept' {
  if (!existing) return 'created'
  const a = Date.parse(String(existing.data.updatedAt ?? ''))
  const b = Date.parse(String(incoming.data.updatedAt ?? ''))
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return 'same'
  return Number.isNaN(a) || b > a ? 'replaced' : 'kept'
}

/** A companion-folder path: relative, `/`-separated, never leaving the folder. */
export function relativePath(path: string): string {
  const parts = path.split('/')
  if (path === '' || path.startsWith('/') || parts.some((p) => p === '..' || p === '' || p === '.')) {
    throw new TeaError(
      'AOF_INVALID',
      `expected a path inside the task's folder such as outputs/report.md, received ${JSON.stringify(path)}`,
    )
  }
  return path
}

// --- the scheduler's pass ---

/**
 * The scheduler's pass on any store (the port's `poll`; protocol/stale-run.ts has the rules). Staleness is judged by
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

/** The leases the pass took back (the port's `reclaimExpired`). */
export async function reclaimExpiredBy(store: TaskStore): Promise<ReclaimedLease[]> {
  const { actions } = await store.poll()
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
