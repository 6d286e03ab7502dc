/**
 * Keeps a run's heartbeat fresh while it is alive (the reference wrote one heartbeat at lease time and never
 * again, so every run longer than the heartbeat TTL was reclaimed). The timer is unref'd: it never keeps a
 * process alive on its own. If the run is lost (reclaimed, re-leased to someone else) the loop stops and says so.
 */

import { isTeaError } from '../../core/errors.ts'
import { DEFAULT_HEARTBEAT_TTL_MS } from '../protocol/lease.ts'
import type { TaskStore } from '../store/port.ts'
import { checkIntervalMs, ttlOption } from '../protocol/ttl.ts'

export interface HeartbeatLoopOptions {
  taskId: string
  agentId: string
  /** Heartbeat TTL written into each beat, 1 ms … 30 days (default 300 000 ms). */
  ttlMs?: number
  /**
   * Time between beats, 1 ms … 2^31 − 1 ms (default a third of the TTL, so two beats may be missed before the run
   * counts as stale).
   */
  intervalMs?: number
  /** Called once when the run is no longer ours; the loop has stopped by then. */
  onLost?: (reason: string) => void
  /** Called for other failures (e.g. a full disk); the loop keeps trying. */
  onError?: (error: unknown) => void
}

export interface HeartbeatLoop {
  /** Beats now (also used by the loop). Resolves false when the run was lost. */
  beat(): Promise<boolean>
  /** Stops the timer and waits for a beat in flight. Safe to call twice. */
  stop(): Promise<void>
  readonly stopped: boolean
}

/** Beats through the task-store port: `run_heartbeat.json` on the folder, the `<ID>.heartbeat` entry on NATS. */
export function startHeartbeat(store: Pick<TaskStore, 'heartbeat'>, options: HeartbeatLoopOptions): HeartbeatLoop {
  // Checked before the timer starts: an interval past a Node timer's range would fire in a tight loop.
  const ttlMs = ttlOption('ttlMs', options.ttlMs, DEFAULT_HEARTBEAT_TTL_MS)
  const intervalMs = checkIntervalMs('intervalMs', options.intervalMs ?? Math.max(10, Math.floor(ttlMs / 3)))
  let stopped = false
  let inFlight: Promise<boolean> | undefined
  const timer = setInterval(() => void loop.beat(), intervalMs)
  timer.unref()

  const loop: HeartbeatLoop = {
    get stopped() {
      return stopped
    },
    beat() {
      if (stopped) return Promise.resolve(false)
      if (inFlight) return inFlight
      inFlight = store
        .heartbeat(options.taskId, options.agentId, { ttlMs })
        .then(() => true)
        .catch((e: unknown) => {
          if (isTeaError(e, 'AOF_LOCKED') && e.details?.lost === true) {
            stopped = true
            clearInterval(timer)
            options.onLost?.(e.message)
            return false
          }
          if (isTeaError(e, 'AOF_NOT_FOUND')) {
            stopped = true
            clearInterval(timer)
            options.onLost?.(e.message)
            return false
          }
          options.onError?.(e)
          return true
        })
        .finally(() => {
          inFlight = undefined
        })
      return inFlight
    },
    async stop() {
      stopped = true
      clearInterval(timer)
      if (inFlight) await inFlight
    },
  }
  return loop
}
