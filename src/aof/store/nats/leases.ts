/**
 * Leases and heartbeats on NATS (the port's `lease` and `heartbeat`): the lease is written into the task entry by
 * compare-and-set, which is the commit point; the run and its heartbeats go to the runs bucket after it, written only
 * by the winner. Times come from the server (`bucket.now()`).
 */

import { TeaError } from '../../../core/errors.ts'
import { sortableId } from '../../../core/ids.ts'
import type { EventInput } from '../../protocol/events.ts'
import {
  DEFAULT_HEARTBEAT_TTL_MS,
  DEFAULT_LEASE_TTL_MS,
  type LeaseOptions,
  extendedLease,
  iso,
  newRun,
  renewedLease,
} from '../../protocol/lease.ts'
import type { RunHeartbeat } from '../../protocol/schemas/run.ts'
import type { Lease } from '../../protocol/schemas/task.ts'
import { taskLease } from '../../protocol/task-file.ts'
import { moved, transitionEvent } from '../../protocol/transition.ts'
import { ttlOption } from '../../protocol/ttl.ts'
import type { StoreLease } from '../port.ts'
import type { NatsContext } from './context.ts'
import { withLease } from './entries.ts'
import { appendEvents } from './events.ts'
import { ownRun } from './runs-bucket.ts'
import { cas, mustRead } from './task-entry.ts'

export async function lease(ctx: NatsContext, id: string, agent: string, options: LeaseOptions = {}): Promise<StoreLease> {
  const ttlMs = ttlOption('ttlMs', options.ttlMs, DEFAULT_LEASE_TTL_MS)
  const hbTtl = ttlOption('heartbeatTtlMs', options.heartbeatTtlMs, DEFAULT_HEARTBEAT_TTL_MS)
  const { now, readRun, beat, setAsideResult, putJson } = ctx.bucket
  for (;;) {
    const { task, revision } = await mustRead(ctx, id)
    if (task.status !== 'ready' && task.status !== 'in-progress') {
      throw new TeaError('AOF_TRANSITION', `task ${id} is ${task.status}; a lease can be taken only on a ready or in-progress task`)
    }
    const t = await now()
    const held = taskLease(task)
    const live = held !== undefined && Date.parse(held.expiresAt) > t.getTime()
    if (live && held.agent !== agent) {
      throw new TeaError('AOF_LOCKED', `task ${id} is leased to ${held.agent} until ${held.expiresAt}; ${agent} cannot take it`)
    }
    const run = await readRun(id)
    const own = task.status === 'in-progress' && live && held.agent === agent ? ownRun(id, held, run) : undefined
    if (own && held) {
      const renewal = renewedLease(held, t, ttlMs)
      const renewed = withLease(task, renewal, t)
      if (!(await cas(ctx, renewed, revision))) continue
      const hb = await beat(id, agent, own.runId, hbTtl, t)
      const payload = { expiresAt: renewal.expiresAt, renewCount: renewal.renewCount }
      await appendEvents(ctx, [{ type: 'lease.renewed', actor: agent, taskId: id, payload }], t)
      return { task: renewed, run: own, heartbeat: hb, renewed: true }
    }
    const runId = sortableId(t.getTime())
    // The lease names its run, in the same write: see `ownRun`.
    const newLease: Lease = { agent, acquiredAt: t.toISOString(), expiresAt: iso(t.getTime() + ttlMs), renewCount: 0, runId }
    const leased =
      task.status === 'ready'
        ? moved({ ...task, data: { ...task.data, lease: newLease } }, 'in-progress', t, { actor: agent })
        : withLease(task, newLease, t)
    // The compare-and-set is the commit point: the run and its first heartbeat are written only by the winner. The
    // events go first, so a server lost before the run entry lands leaves no move unlogged (the scheduler then
    // reclaims the run that never started).
    if (!(await cas(ctx, leased, revision))) continue
    const events: EventInput[] = [
      { type: 'lease.acquired', actor: agent, taskId: id, payload: { agent, runId, expiresAt: newLease.expiresAt } },
    ]
    if (task.status === 'ready') events.unshift(transitionEvent(task, 'in-progress', { actor: agent, reason: 'lease_acquired' }))
    await appendEvents(ctx, events, t)
    // An earlier run's result is set aside before the new run exists, as the filesystem store does: no session end
    // can then apply it to the new run.
    await setAsideResult(id)
    const started = newRun(id, agent, runId, t.toISOString(), {})
    await putJson(`${id}.run`, started)
    const hb = await beat(id, agent, runId, hbTtl, t)
    return { task: leased, run: started, heartbeat: hb, renewed: false }
  }
}

export async function heartbeat(ctx: NatsContext, id: string, agent: string, options: { ttlMs?: number } = {}): Promise<RunHeartbeat> {
  const ttlMs = ttlOption('ttlMs', options.ttlMs, DEFAULT_HEARTBEAT_TTL_MS)
  for (;;) {
    const { task, revision } = await mustRead(ctx, id)
    const run = await ctx.bucket.readRun(id)
    const l = taskLease(task)
    if (task.status !== 'in-progress' || !run || run.status !== 'running' || (l ? l.agent : run.agentId) !== agent) {
      throw new TeaError('AOF_LOCKED', `${agent} does not hold a live run of ${id} (status ${task.status}, lease ${l?.agent ?? 'none'})`, {
        details: { lost: true },
      })
    }
    const t = await ctx.bucket.now()
    const extended = l ? extendedLease(l, t) : undefined
    if (extended && !(await cas(ctx, withLease(task, extended, t), revision))) continue
    return ctx.bucket.beat(id, agent, run.runId, ttlMs, t)
  }
}
