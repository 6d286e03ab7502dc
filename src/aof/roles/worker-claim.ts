/**
 * How `tea worker` picks its next task.
 *
 * Routing: a task is routed to agent `ID` when `routing.agent` is `ID`; a task without `routing.agent` is routed by
 * `routing.role`, then `routing.team` (the reference dispatcher's order, research/aof.md §3.9, without its org-chart
 * resolution of teams to leads).
 *
 * Order: first the worker's own unfinished runs — in-progress tasks whose lease (or, without a lease, whose running
 * `run.json`) belongs to `ID` — so a restarted worker resumes them; then `ready` tasks routed to `ID` whose
 * `dependsOn` are all done. Oldest first (`createdAt`, then id) in both groups.
 *
 * Claiming: a ready task is leased (`acquireLease`: → in-progress, a new AOF run). Another worker may win the race
 * for it: a lease held by another agent (`AOF_LOCKED`), a task no longer ready (`AOF_TRANSITION`) or gone
 * (`AOF_NOT_FOUND`) mean "taken", and the next candidate is tried. So does a lease that came back `renewed`: a
 * worker with the same id got there first, and its run is not ours to share. An own unfinished run is re-claimed
 * with a heartbeat (which also extends an expiring or expired lease) and keeps its AOF run id; the caller may veto
 * it (`canAdopt`), e.g. when the agent run is still alive in another process of the same agent id.
 *
 * Everything goes through the task-store port, so the same claim works on the folder and on NATS (there a lease
 * and a heartbeat are compare-and-sets on the task's revision: two boards never both win a task).
 */

import { isTeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'
import type { TaskStore } from '../store/port.ts'
import { type Task, taskLease } from '../protocol/task-file.ts'
import { checkTtlMs } from '../protocol/ttl.ts'

export interface WorkerClaim {
  /** The task, in progress and leased to the worker's agent. */
  task: Task
  /** The AOF run the worker works in (`run.json` `runId`). */
  aofRunId: string
  /** True for the worker's own unfinished run taken up again, false for a fresh lease. */
  adopted: boolean
}

export interface ClaimOptions {
  leaseTtlMs?: number
  heartbeatTtlMs?: number
  /** Whether an own unfinished run may be taken up (default: always). */
  canAdopt?: (task: Task, aofRunId: string) => Promise<boolean> | boolean
}

/** The agent a task is routed to: `routing.agent`, else `routing.role`, else `routing.team`. */
export function routedTarget(task: Task): string | undefined {
  const r = task.data.routing
  if (!isPlainObject(r)) return undefined
  return nonEmpty(r.agent) ?? nonEmpty(r.role) ?? nonEmpty(r.team)
}

/** The next task for `agentId`, claimed; undefined when there is none. */
export async function claimNextTask(store: TaskStore, agentId: string, options: ClaimOptions = {}): Promise<WorkerClaim | undefined> {
  // Checked up front, not only by the lease: a bad TTL is the caller's mistake, never "no task".
  if (options.leaseTtlMs !== undefined) checkTtlMs('leaseTtlMs', options.leaseTtlMs)
  if (options.heartbeatTtlMs !== undefined) checkTtlMs('heartbeatTtlMs', options.heartbeatTtlMs)
  // Files that cannot be read (a FIFO, a symlink, broken YAML) are left out here; `tea aof lint` names them.
  const { tasks } = await store.list(['in-progress', 'ready'])
  tasks.sort(byAge)
  for (const task of tasks) {
    if (task.status !== 'in-progress') continue
    const claim = await adopt(store, task, agentId, options)
    if (claim) return claim
  }
  const done = new Map<string, boolean>()
  for (const task of tasks) {
    if (task.status !== 'ready' || routedTarget(task) !== agentId) continue
    if (!(await allDone(store, dependsOn(task), done))) continue
    const claim = await lease(store, task, agentId, options)
    if (claim) return claim
  }
  return undefined
}

/** Whether every dependency is done; looked up by id (and remembered for this claim), not by listing done tasks. */
async function allDone(store: TaskStore, deps: string[], seen: Map<string, boolean>): Promise<boolean> {
  for (const dep of deps) {
    let done = seen.get(dep)
    if (done === undefined) {
      // An unreadable dependency is not done; lint names it.
      done = await store.get(dep).then(
        (t) => t?.status === 'done',
        () => false,
      )
      seen.set(dep, done)
    }
    if (!done) return false
  }
  return true
}

async function adopt(store: TaskStore, task: Task, agentId: string, options: ClaimOptions): Promise<WorkerClaim | undefined> {
  const run = await store.readRun(task.id)
  const owner = taskLease(task)?.agent ?? run?.agentId
  if (owner !== agentId || !run || run.status !== 'running' || run.agentId !== agentId || !run.runId) return undefined
  if (options.canAdopt && !(await options.canAdopt(task, run.runId))) return undefined
  try {
    await store.heartbeat(task.id, agentId, options.heartbeatTtlMs ? { ttlMs: options.heartbeatTtlMs } : {})
  } catch (e) {
    if (isTaken(e)) return undefined
    throw e
  }
  // The beat was for whatever run was current under the lock; make sure that is still the one we saw.
  const now = await store.get(task.id)
  if (!now || now.status !== 'in-progress' || (await store.readRun(task.id))?.runId !== run.runId) return undefined
  return { task: now, aofRunId: run.runId, adopted: true }
}

async function lease(store: TaskStore, task: Task, agentId: string, options: ClaimOptions): Promise<WorkerClaim | undefined> {
  try {
    const r = await store.lease(task.id, agentId, {
      ...(options.leaseTtlMs ? { ttlMs: options.leaseTtlMs } : {}),
      ...(options.heartbeatTtlMs ? { heartbeatTtlMs: options.heartbeatTtlMs } : {}),
    })
    if (r.renewed || !r.run.runId) return undefined
    return { task: r.task, aofRunId: r.run.runId, adopted: false }
  } catch (e) {
    if (isTaken(e)) return undefined
    throw e
  }
}

function isTaken(e: unknown): boolean {
  return isTeaError(e, 'AOF_LOCKED') || isTeaError(e, 'AOF_TRANSITION') || isTeaError(e, 'AOF_NOT_FOUND')
}

function byAge(a: Task, b: Task): number {
  const ta = Date.parse(String(a.data.createdAt)) || 0
  const tb = Date.parse(String(b.data.createdAt)) || 0
  return ta !== tb ? ta - tb : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

function dependsOn(task: Task): string[] {
  const deps = task.data.dependsOn
  return Array.isArray(deps) ? deps.filter((d): d is string => typeof d === 'string') : []
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}
