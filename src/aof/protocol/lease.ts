/**
 * The rules of leases and heartbeats, the same on every store. A lease (`lease: {agent, acquiredAt, expiresAt,
 * renewCount}`) says who works on an in-progress task until when; taking one on a `ready` task starts a new run
 * (fresh `runId`). A heartbeat refreshes the run's heartbeat record and, when less than half the lease is left,
 * extends the lease by its original length, so a live run is never reclaimed while it keeps beating. A heartbeat is
 * stale once its `expiresAt` (else `lastHeartbeat` + the TTL) is at or before now.
 */

import type { RunArtifact, RunHeartbeat } from './schemas/run.ts'
import type { Lease } from './schemas/task.ts'
import { MAX_TTL_MS, MIN_TTL_MS } from './ttl.ts'

export const DEFAULT_LEASE_TTL_MS = 600_000
export const DEFAULT_HEARTBEAT_TTL_MS = 300_000

export interface LeaseOptions {
  /** Lease length, 1 ms … 30 days (default 10 min). */
  ttlMs?: number
  /** Heartbeat TTL, 1 ms … 30 days (default 5 min). */
  heartbeatTtlMs?: number
}

export interface HeartbeatOptions {
  /** Heartbeat TTL, 1 ms … 30 days (default 5 min). */
  ttlMs?: number
}

/**
 * The heartbeat a run writes at `now`, after `prev` (the task's last one, if any): its beat count goes on while the
 * run is the same. Both stores write this record (the NATS store at server time).
 */
export function nextHeartbeat(
  prev: RunHeartbeat | undefined,
  id: string,
  agent: string,
  runId: string | undefined,
  ttlMs: number,
  now: Date,
): RunHeartbeat {
  const sameRun = prev !== undefined && prev.runId === runId
  return {
    taskId: id,
    agentId: agent,
    ...(runId ? { runId } : {}),
    lastHeartbeat: now.toISOString(),
    beatCount: sameRun ? (prev.beatCount ?? 0) + 1 : 0,
    expiresAt: iso(now.getTime() + ttlMs),
  }
}

/** When a heartbeat expires: its `expiresAt`, else (a writer that leaves it out) `lastHeartbeat` + the TTL. */
export function heartbeatExpiry(hb: RunHeartbeat, ttlMs: number): number {
  return hb.expiresAt !== undefined ? Date.parse(hb.expiresAt) : Date.parse(hb.lastHeartbeat) + ttlMs
}

/**
 * The lease a heartbeat at `now` leaves: extended by its own length when less than half of it is left, else
 * undefined (unchanged). The length as written (by us, or by hand) is held to the TTL range, so a file that says "a
 * thousand years" cannot push an expiry past what a Date can hold.
 */
export function extendedLease(lease: Lease, now: Date): Lease | undefined {
  const length = Math.min(Math.max(Date.parse(lease.expiresAt) - Date.parse(lease.acquiredAt), MIN_TTL_MS), MAX_TTL_MS)
  return Date.parse(lease.expiresAt) - now.getTime() < length / 2 ? { ...lease, expiresAt: iso(now.getTime() + length) } : undefined
}

/** `held` renewed at `now` for another `ttlMs`. */
export function renewedLease(held: Lease, now: Date, ttlMs: number): Lease {
  return { ...held, expiresAt: iso(now.getTime() + ttlMs), renewCount: (held.renewCount ?? 0) + 1 }
}

/** A new run's `run.json`: `runId` also in `metadata`, which survives the reference's rewrites of the file. */
export function newRun(
  taskId: string,
  agent: string,
  runId: string,
  startedAt: string,
  metadata: Record<string, unknown> = { runId },
): RunArtifact {
  return {
    taskId,
    agentId: agent,
    runId,
    startedAt,
    status: 'running',
    artifactPaths: { inputs: 'inputs/', work: 'work/', output: 'outputs/' },
    metadata,
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString()
}
