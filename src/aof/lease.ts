/**
 * Leases and heartbeats. A lease (frontmatter `lease: {agent, acquiredAt, expiresAt, renewCount}`) says who works
 * on an in-progress task until when; taking one on a `ready` task moves it to `in-progress` and starts a new run
 * (fresh `runId`, `run.json`, first heartbeat). Another agent may take the task only once the lease has expired.
 * A heartbeat refreshes `run_heartbeat.json` and, when less than half the lease is left, extends the lease by its
 * original length, so a live run is never reclaimed while it keeps beating.
 */

import { sortableId } from '../core/ids.ts'
import { TeaError } from '../core/errors.ts'
import { type AofContext } from './context.ts'
import { appendEvent } from './events.ts'
import { readHeartbeat, readRun, writeHeartbeatFile, writeRun } from './run-artifacts.ts'
import type { RunArtifact, RunHeartbeat } from './schemas/run.ts'
import type { Lease } from './schemas/task.ts'
import { type Task, taskLease } from './task-file.ts'
import { readTaskLocked, withTaskLock } from './task-store.ts'
import { moveTaskLocked, updateTaskLocked } from './task-transition.ts'

export const DEFAULT_LEASE_TTL_MS = 600_000
export const DEFAULT_HEARTBEAT_TTL_MS = 300_000

export interface LeaseOptions {
  ttlMs?: number
  heartbeatTtlMs?: number
}

export interface LeaseResult {
  task: Task
  run: RunArtifact
  heartbeat: RunHeartbeat
  /** True when the agent already held the lease and it was renewed. */
  renewed: boolean
}

export async function acquireLease(ctx: AofContext, id: string, agent: string, options: LeaseOptions = {}): Promise<LeaseResult> {
  const ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS
  const hbTtl = options.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS
  return withTaskLock(ctx, id, () => {
    const task = readTaskLocked(ctx, id)
    if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found`)
    if (task.status !== 'ready' && task.status !== 'in-progress') {
      throw new TeaError('AOF_TRANSITION', `task ${id} is ${task.status}; a lease can be taken only on a ready or in-progress task`)
    }
    const now = ctx.now()
    const held = taskLease(task)
    const live = held !== undefined && Date.parse(held.expiresAt) > now.getTime()
    if (live && held.agent !== agent) {
      throw new TeaError('AOF_LOCKED', `task ${id} is leased to ${held.agent} until ${held.expiresAt}; ${agent} cannot take it`)
    }
    const run = readRun(ctx, id)
    if (task.status === 'in-progress' && live && run && run.agentId === agent && run.status === 'running') {
      const lease: Lease = { ...held, expiresAt: iso(now.getTime() + ttlMs), renewCount: (held.renewCount ?? 0) + 1 }
      const renewedTask = updateTaskLocked(ctx, task, (t) => void (t.data.lease = lease))
      const heartbeat = beat(ctx, id, agent, run.runId, hbTtl, now)
      appendEvent(ctx, { type: 'lease.renewed', actor: agent, taskId: id, payload: { expiresAt: lease.expiresAt, renewCount: lease.renewCount } })
      return { task: renewedTask, run, heartbeat, renewed: true }
    }
    const lease: Lease = { agent, acquiredAt: now.toISOString(), expiresAt: iso(now.getTime() + ttlMs), renewCount: 0 }
    const leased = { ...task, data: { ...task.data, lease } }
    const moved = task.status === 'ready'
      ? moveTaskLocked(ctx, leased, 'in-progress', { actor: agent, reason: 'lease_acquired' })
      : updateTaskLocked(ctx, task, (t) => void (t.data.lease = lease))
    const newRun: RunArtifact = {
      taskId: id,
      agentId: agent,
      runId: sortableId(now.getTime()),
      startedAt: now.toISOString(),
      status: 'running',
      artifactPaths: { inputs: 'inputs/', work: 'work/', output: 'outputs/' },
      metadata: {},
    }
    writeRun(ctx, newRun)
    const heartbeat = beat(ctx, id, agent, newRun.runId, hbTtl, now)
    appendEvent(ctx, { type: 'lease.acquired', actor: agent, taskId: id, payload: { agent, runId: newRun.runId, expiresAt: lease.expiresAt } })
    return { task: moved, run: newRun, heartbeat, renewed: false }
  })
}

export interface HeartbeatOptions {
  ttlMs?: number
}

/** One heartbeat from `agent`, which must hold the task's lease (or own its current run when no lease is set). */
export async function heartbeat(ctx: AofContext, id: string, agent: string, options: HeartbeatOptions = {}): Promise<RunHeartbeat> {
  return withTaskLock(ctx, id, () => {
    const task = readTaskLocked(ctx, id)
    if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found`)
    const run = readRun(ctx, id)
    const lease = taskLease(task)
    if (task.status !== 'in-progress' || !run || run.status !== 'running' || (lease ? lease.agent : run.agentId) !== agent) {
      throw new TeaError('AOF_LOCKED', `${agent} does not hold a live run of ${id} (status ${task.status}, lease ${lease?.agent ?? 'none'})`, {
        details: { lost: true },
      })
    }
    const now = ctx.now()
    if (lease) {
      const length = Date.parse(lease.expiresAt) - Date.parse(lease.acquiredAt)
      if (Date.parse(lease.expiresAt) - now.getTime() < length / 2) {
        updateTaskLocked(ctx, task, (t) => void (t.data.lease = { ...lease, expiresAt: iso(now.getTime() + length) }))
      }
    }
    return beat(ctx, id, agent, run.runId, options.ttlMs ?? DEFAULT_HEARTBEAT_TTL_MS, now)
  })
}

function beat(ctx: AofContext, id: string, agent: string, runId: string | undefined, ttlMs: number, now: Date): RunHeartbeat {
  const prev = readHeartbeat(ctx, id)
  const sameRun = prev !== undefined && prev.runId === runId
  const hb: RunHeartbeat = {
    taskId: id,
    agentId: agent,
    ...(runId ? { runId } : {}),
    lastHeartbeat: now.toISOString(),
    beatCount: sameRun ? (prev.beatCount ?? 0) + 1 : 0,
    expiresAt: iso(now.getTime() + ttlMs),
  }
  writeHeartbeatFile(ctx, hb)
  return hb
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}
