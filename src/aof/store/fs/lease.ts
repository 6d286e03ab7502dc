/**
 * Leases and heartbeats on the filesystem store (the rules are protocol/lease.ts). A lease (frontmatter `lease: {agent, acquiredAt, expiresAt, renewCount}`) says who works
 * on an in-progress task until when; taking one on a `ready` task moves it to `in-progress` and starts a new run
 * (fresh `runId`, `run.json`, first heartbeat). Another agent may take the task only once the lease has expired.
 * A heartbeat refreshes `run_heartbeat.json` and, when less than half the lease is left, extends the lease by its
 * original length, so a live run is never reclaimed while it keeps beating.
 */

import { sortableId } from '../../../core/ids.ts'
import { TeaError } from '../../../core/errors.ts'
import { type AofContext, runDirPath } from './context.ts'
import type { EventInput } from '../../protocol/events.ts'
import { appendEvents } from './event-log.ts'
import { mkdirs } from './fs-atomic.ts'
import { type Rollback, allOrNothing } from './rollback.ts'
import { migrateRunDir, readHeartbeat, readRun, runArtifactPath, setAsideRunResult, writeHeartbeatFile, writeRun } from './run-artifacts.ts'
import type { RunArtifact, RunHeartbeat } from '../../protocol/schemas/run.ts'
import type { Lease } from '../../protocol/schemas/task.ts'
import { type Task, taskLease } from '../../protocol/task-file.ts'
import { readTaskLocked, withTaskLock } from './task-store.ts'
import { stageMove, updateTaskLocked } from './task-transition.ts'
import {
  DEFAULT_HEARTBEAT_TTL_MS,
  DEFAULT_LEASE_TTL_MS,
  type HeartbeatOptions,
  type LeaseOptions,
  extendedLease,
  iso,
  newRun,
  nextHeartbeat,
  renewedLease,
} from '../../protocol/lease.ts'
import { ttlOption } from '../../protocol/ttl.ts'

export interface LeaseResult {
  task: Task
  run: RunArtifact
  heartbeat: RunHeartbeat
  /** True when the agent already held the lease and it was renewed. */
  renewed: boolean
}

/**
 * Takes (or renews) `agent`'s lease on task `id`. All or nothing: the options are checked before anything is
 * touched, and a failure after the first write takes every write back (run.json, the heartbeat, the move to
 * in-progress; the events are written in one append that is the commit point), so a failed lease leaves the task
 * as it was.
 */
export async function acquireLease(ctx: AofContext, id: string, agent: string, options: LeaseOptions = {}): Promise<LeaseResult> {
  const ttlMs = ttlOption('ttlMs', options.ttlMs, DEFAULT_LEASE_TTL_MS)
  const hbTtl = ttlOption('heartbeatTtlMs', options.heartbeatTtlMs, DEFAULT_HEARTBEAT_TTL_MS)
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
      const lease = renewedLease(held, now, ttlMs)
      const hb = heartbeatRecord(ctx, id, agent, run.runId, hbTtl, now)
      return allOrNothing((rb) => {
        writeBeat(ctx, rb, hb)
        const renewedTask = updateInPlace(ctx, rb, task, lease)
        appendEvents(ctx, [
          { type: 'lease.renewed', actor: agent, taskId: id, payload: { expiresAt: lease.expiresAt, renewCount: lease.renewCount } },
        ])
        return { task: renewedTask, run, heartbeat: hb, renewed: true }
      })
    }
    // Everything is computed before the first write, so nothing but the writes themselves can fail midway.
    const lease: Lease = { agent, acquiredAt: now.toISOString(), expiresAt: iso(now.getTime() + ttlMs), renewCount: 0 }
    const runId = sortableId(now.getTime())
    const started: RunArtifact = newRun(id, agent, runId, now.toISOString())
    const hb = heartbeatRecord(ctx, id, agent, runId, hbTtl, now)
    const acquired: EventInput = {
      type: 'lease.acquired',
      actor: agent,
      taskId: id,
      payload: { agent, runId, expiresAt: lease.expiresAt },
    }
    return allOrNothing((rb) => {
      // A move, not a copy: undoing the lease leaves the folder in its new place, which every reader finds.
      migrateRunDir(ctx, id)
      rb.folder(runDirPath(ctx, id), () => mkdirs(runDirPath(ctx, id)))
      const restore = setAsideRunResult(ctx, id)
      if (restore) rb.add(restore)
      rb.replace(runArtifactPath(ctx, id, 'run.json'), () => writeRun(ctx, started))
      writeBeat(ctx, rb, hb)
      let moved: Task
      if (task.status === 'ready') {
        const staged = stageMove(ctx, { ...task, data: { ...task.data, lease } }, 'in-progress', { actor: agent, reason: 'lease_acquired' })
        rb.add(staged.undo)
        appendEvents(ctx, [staged.event, acquired])
        staged.commit()
        moved = staged.moved
      } else {
        moved = updateInPlace(ctx, rb, task, lease)
        appendEvents(ctx, [acquired])
      }
      return { task: moved, run: started, heartbeat: hb, renewed: false }
    })
  })
}

/**
 * One heartbeat from `agent`, which must hold the task's lease (or own its current run when no lease is set). All
 * or nothing: the heartbeat file and the lease extension are both written or neither.
 */
export async function heartbeat(ctx: AofContext, id: string, agent: string, options: HeartbeatOptions = {}): Promise<RunHeartbeat> {
  const ttlMs = ttlOption('ttlMs', options.ttlMs, DEFAULT_HEARTBEAT_TTL_MS)
  return withTaskLock(ctx, id, () => {
    const task = readTaskLocked(ctx, id)
    if (!task) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found`)
    const run = readRun(ctx, id)
    const lease = taskLease(task)
    if (task.status !== 'in-progress' || !run || run.status !== 'running' || (lease ? lease.agent : run.agentId) !== agent) {
      throw new TeaError(
        'AOF_LOCKED',
        `${agent} does not hold a live run of ${id} (status ${task.status}, lease ${lease?.agent ?? 'none'})`,
        {
          details: { lost: true },
        },
      )
    }
    const now = ctx.now()
    const hb = heartbeatRecord(ctx, id, agent, run.runId, ttlMs, now)
    const extended = lease ? extendedLease(lease, now) : undefined
    return allOrNothing((rb) => {
      writeBeat(ctx, rb, hb)
      if (extended) updateInPlace(ctx, rb, task, extended)
      return hb
    })
  })
}

function heartbeatRecord(ctx: AofContext, id: string, agent: string, runId: string | undefined, ttlMs: number, now: Date): RunHeartbeat {
  return nextHeartbeat(readHeartbeat(ctx, id), id, agent, runId, ttlMs, now)
}

function writeBeat(ctx: AofContext, rb: Rollback, hb: RunHeartbeat): void {
  rb.replace(runArtifactPath(ctx, hb.taskId, 'run_heartbeat.json'), () => writeHeartbeatFile(ctx, hb))
}

/** The task rewritten in place with `lease`; undone by writing back the text it had. */
function updateInPlace(ctx: AofContext, rb: Rollback, task: Task, lease: Lease): Task {
  let updated: Task | undefined
  rb.replace(task.path, () => {
    updated = updateTaskLocked(ctx, task, (t) => void (t.data.lease = lease))
  })
  return updated!
}
