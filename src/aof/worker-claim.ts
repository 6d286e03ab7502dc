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
 */

import { isTeaError } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'
import type { AofContext } from './context.ts'
import { acquireLease, heartbeat } from './lease.ts'
import { readRun } from './run-artifacts.ts'
import { type Task, taskLease } from './task-file.ts'
import { getTask, idsIn, listTasks } from './task-store.ts'
import { checkTtlMs } from './ttl.ts'

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
export async function claimNextTask(ctx: AofContext, agentId: string, options: ClaimOptions = {}): Promise<WorkerClaim | undefined> {
  // Checked up front, not only by the lease: a bad TTL is the caller's mistake, never "no task".
  if (options.leaseTtlMs !== undefined) checkTtlMs('leaseTtlMs', options.leaseTtlMs)
  if (options.heartbeatTtlMs !== undefined) checkTtlMs('heartbeatTtlMs', options.heartbeatTtlMs)
  // Files that cannot be read (a FIFO, a symlink, broken YAML) are left out here; `tea aof lint` names them.
  const { tasks } = listTasks(ctx, ['in-progress', 'ready'])
  tasks.sort(byAge)
  for (const task of tasks) {
    if (task.status !== 'in-progress') continue
    const claim = await adopt(ctx, task, agentId, options)
    if (claim) return claim
  }
  const done = new Set(idsIn(ctx, 'done'))
  for (const task of tasks) {
    if (task.status !== 'ready' || routedTarget(task) !== agentId) continue
    if (dependsOn(task).some((dep) => !done.has(dep))) continue
    const claim = await lease(ctx, task, agentId, options)
    if (claim) return claim
  }
  return undefined
}

async function adopt(ctx: AofContext, task: Task, agentId: string, options: ClaimOptions): Promise<WorkerClaim | undefined> {
  const run = readRun(ctx, task.id)
  const owner = taskLease(task)?.agent ?? run?.agentId
  if (owner !== agentId || !run || run.status !== 'running' || run.agentId !== agentId || !run.runId) return undefined
  if (options.canAdopt && !(await options.canAdopt(task, run.runId))) return undefined
  try {
    await heartbeat(ctx, task.id, agentId, options.heartbeatTtlMs ? { ttlMs: options.heartbeatTtlMs } : {})
  } catch (e) {
    if (isTaken(e)) return undefined
    throw e
  }
  // The beat was for whatever run was current under the lock; make sure that is still the one we saw.
  const now = await getTask(ctx, task.id)
  if (!now || now.status !== 'in-progress' || readRun(ctx, task.id)?.runId !== run.runId) return undefined
  return { task: now, aofRunId: run.runId, adopted: true }
}

async function lease(ctx: AofContext, task: Task, agentId: string, options: ClaimOptions): Promise<WorkerClaim | undefined> {
  try {
    const r = await acquireLease(ctx, task.id, agentId, {
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
