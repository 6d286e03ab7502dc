/**
 * The worker pool (SPEC §3.7), a thin layer over tinypool. It is lazy: nothing starts until the first `run`, so an
 * agent that never plans starts no threads. A task that outlives its `timeoutMs` has its worker terminated (tinypool
 * kills the thread running an aborted task and starts a fresh one for the next), not left spinning; `run:` code is
 * first given the chance to stop itself at the limit, keeping its worker (time-limit.ts). Failures reported by the
 * worker come back as the original TeaError; a timeout is POOL_ERROR with `details.reason: 'timeout'`; the caller's
 * signal firing is a `cancel` ControlSignal. Short tasks go faster in batches (`runBatch`, batch.ts).
 */

import { MessageChannel } from 'node:worker_threads'
import { Tinypool } from 'tinypool'
import { builtin, holdNodeCache } from '../core/builtin.ts'
import { TeaError } from '../core/errors.ts'
import { once } from '../core/util.ts'
import { cancelled } from '../core/signals.ts'
import type { AbortHandle } from './abort-handle.ts'
import { abortHandle } from './abort-handle.ts'
import type { BatchMember, BatchOptions, PoolBatch, SendBatch } from './batch.ts'
import { runBatch } from './batch.ts'
import type { HostMethods } from './host.ts'
import { serveHost } from './host.ts'
import type { PoolTask, TaskReply } from './protocol.ts'
import { deserializeError } from './protocol.ts'
import { timedOut, timeLimit } from './time-limit.ts'
import { workerLocation } from './worker-location.ts'

export type { HostMethods } from './host.ts'
export { serveHost } from './host.ts'

export interface PoolOptions {
  /** Threads at most; default min(4, cores). */
  maxThreads?: number
  /** An idle worker exits after this long (ms); default 10 s. */
  idleTimeoutMs?: number
}

export interface RunOptions {
  signal?: AbortSignal
  timeoutMs?: number
  host?: HostMethods
}

export interface PoolRunResult {
  value: unknown
  stateUpdate?: Record<string, unknown>
  removed?: string[]
}

export interface Pool {
  readonly maxThreads: number
  /** True once a worker thread has been asked for. */
  readonly started: boolean
  run<T extends PoolTask>(task: T, options?: RunOptions): Promise<PoolRunResult>
  /** Several tasks for one worker, run there one after the other, each reported as it starts and ends (batch.ts). */
  runBatch(members: readonly BatchMember[], options: BatchOptions): PoolBatch
  close(): Promise<void>
}

export function defaultConcurrency(): number {
  return Math.max(1, Math.min(4, builtin('node:os').availableParallelism()))
}

export function createPool(options: PoolOptions = {}): Pool {
  const { maxThreads } = options
  if (maxThreads !== undefined && (!Number.isInteger(maxThreads) || maxThreads < 1))
    throw new TeaError('POOL_ERROR', `maxThreads must be a whole number ≥ 1, got ${maxThreads}`)
  // The machine's share when first asked for: that loads node:os, which a run that starts no worker never needs.
  const threads = once((): number => maxThreads ?? defaultConcurrency())
  let tinypool: Tinypool | undefined
  let closed = false
  const get = (): Tinypool => {
    if (closed) throw new TeaError('POOL_ERROR', 'the worker pool was used after it was closed')
    if (!tinypool) {
      const where = workerLocation()
      tinypool = new Tinypool({
        filename: where.filename,
        name: where.name,
        minThreads: 0,
        maxThreads: threads(),
        idleTimeout: options.idleTimeoutMs ?? 10_000,
      })
    }
    return tinypool
  }
  return {
    get maxThreads() {
      return threads()
    },
    get started() {
      return tinypool !== undefined
    },
    async run(task, runOptions = {}) {
      const { signal, timeoutMs, host } = runOptions
      if (signal?.aborted) throw cancelled()
      const pool = get()
      const channel = host ? new MessageChannel() : undefined
      if (channel) serveHost(channel.port1, host!)
      // On cancel the worker's own signal fires first (its context's `signal`), then tinypool terminates the thread.
      const tellAborted = (): void => {
        try {
          channel?.port1.postMessage({ abort: true })
        } catch {
          // port already closed: the task has finished
        }
      }
      // Our own abort handle only when there is a timeout to enforce; otherwise the caller's signal goes as it is.
      let timedOutNow = false
      let timer: NodeJS.Timeout | undefined
      let taskSignal: AbortSignal | AbortHandle | undefined = signal
      let onCallerAbort: (() => void) | undefined = channel ? tellAborted : undefined
      const limit = timeLimit(task, timeoutMs)
      if (limit.hard !== undefined) {
        const abort = abortHandle()
        taskSignal = abort
        onCallerAbort = () => {
          tellAborted()
          abort.abort()
        }
        timer = setTimeout(() => {
          timedOutNow = true
          abort.abort()
        }, limit.hard)
      }
      if (onCallerAbort) signal?.addEventListener('abort', onCallerAbort, { once: true })
      try {
        let sent: PoolTask = channel ? { ...task, port: channel.port2 } : task
        if (limit.soft !== undefined) sent = { ...sent, timeoutMs: limit.soft }
        const reply: TaskReply = await startingWorkers(pool, threads(), () =>
          pool.run(sent, {
            ...(taskSignal ? { signal: taskSignal } : {}),
            ...(channel ? { transferList: [channel.port2] } : {}),
          }),
        )
        if (!reply.ok) throw deserializeError(reply.error)
        const out: PoolRunResult = { value: reply.value }
        if (reply.stateUpdate) out.stateUpdate = reply.stateUpdate
        if (reply.removed) out.removed = reply.removed
        return out
      } catch (e) {
        if (timedOutNow) throw timedOut(task, timeoutMs!)
        if (signal?.aborted) throw cancelled()
        throw e
      } finally {
        if (timer) clearTimeout(timer)
        if (onCallerAbort) signal?.removeEventListener('abort', onCallerAbort)
        channel?.port1.close()
      }
    },
    runBatch(members, options) {
      const send: SendBatch = (task, signal) => {
        const pool = get()
        return startingWorkers(pool, threads(), () => pool.run(task, { signal, transferList: [task.port] }))
      }
      return runBatch(send, members, options)
    },
    async close() {
      closed = true
      const pool = tinypool
      tinypool = undefined
      if (pool) await pool.destroy()
    },
  }
}

/**
 * Hands a task to tinypool with V8's start flags held until each worker thread that the hand-over starts is online.
 * Node loads ~110 of its own modules into a new thread before any of tea's code runs there, and under the executables'
 * flags (scripts/build/sea-build.mjs) it would compile each from source: ~25 ms of a plan's or a Lua agent's run on
 * x64. With the start flags they come from Node's code cache (src/core/builtin.ts). The thread's own loader sets
 * the executables' flags back before it compiles tea's program.
 */
function startingWorkers<T>(pool: Tinypool, maxThreads: number, send: () => T): T {
  // A full pool starts no worker: most hand-overs of a long plan pay nothing here.
  if (pool.threads.length >= maxThreads) return send()
  const before = new Set(pool.threads)
  const release = holdNodeCache()
  let out: T
  try {
    out = send()
  } catch (e) {
    release()
    throw e
  }
  const started = pool.threads.filter((w) => !before.has(w))
  let waiting = started.length
  if (waiting === 0) release()
  for (const worker of started) {
    let seen = false
    const up = (): void => {
      if (seen) return
      seen = true
      if (--waiting === 0) release()
    }
    worker.once('online', up)
    worker.once('exit', up)
  }
  return out
}
