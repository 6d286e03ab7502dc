/**
 * The worker pool (SPEC §3.7), a thin layer over tinypool. It is lazy: nothing starts until the first `run`, so an
 * agent that never plans starts no threads. A task that outlives its `timeoutMs` has its worker terminated (tinypool
 * kills the thread running an aborted task and starts a fresh one for the next), not left spinning; `run:` code is
 * first given the chance to stop itself at the limit, keeping its worker (see `graceMs`). Failures
 * reported by the worker come back as the original TeaError; a timeout is POOL_ERROR with `details.reason:
 * 'timeout'`; the caller's signal firing is a `cancel` ControlSignal.
 */

import { availableParallelism } from 'node:os'
import { MessageChannel } from 'node:worker_threads'
import { Tinypool } from 'tinypool'
import { TeaError } from '../core/errors.ts'
import { cancelled } from '../core/signals.ts'
import type { HostNotice, HostReply, HostRequest, PoolTask, TaskReply } from './protocol.ts'
import { DRAIN, deserializeError, serializeError } from './protocol.ts'
import { workerLocation } from './worker-location.ts'
import type { AbortHandle } from './abort-handle.ts'
import { abortHandle } from './abort-handle.ts'

export interface PoolOptions {
  /** Threads at most; default min(4, cores). */
  maxThreads?: number
  /** An idle worker exits after this long (ms); default 10 s. */
  idleTimeoutMs?: number
}

/** Main-thread functions a worker task may call back (see protocol.ts), by method name. */
export type HostMethods = Record<string, (...args: any[]) => unknown>

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
  close(): Promise<void>
}

export function defaultConcurrency(): number {
  return Math.max(1, Math.min(4, availableParallelism()))
}

export function createPool(options: PoolOptions = {}): Pool {
  const maxThreads = options.maxThreads ?? defaultConcurrency()
  if (!Number.isInteger(maxThreads) || maxThreads < 1)
    throw new TeaError('POOL_ERROR', `maxThreads must be a whole number ≥ 1, got ${maxThreads}`)
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
        maxThreads,
        idleTimeout: options.idleTimeoutMs ?? 10_000,
      })
    }
    return tinypool
  }
  return {
    maxThreads,
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
      let timedOut = false
      let timer: NodeJS.Timeout | undefined
      let taskSignal: AbortSignal | AbortHandle | undefined = signal
      let onCallerAbort: (() => void) | undefined = channel ? tellAborted : undefined
      // A self-timed task (run: code) stops itself at its limit and keeps its worker; the thread is terminated only
      // when that fails (a long call into a built-in), after a grace period.
      const softLimit = task.selfTimed === true && timeoutMs !== undefined && timeoutMs > 0 ? Math.ceil(timeoutMs) : undefined
      if (timeoutMs !== undefined && timeoutMs > 0) {
        const abort = abortHandle()
        taskSignal = abort
        onCallerAbort = () => {
          tellAborted()
          abort.abort()
        }
        timer = setTimeout(
          () => {
            timedOut = true
            abort.abort()
          },
          softLimit === undefined ? timeoutMs : softLimit + graceMs(softLimit),
        )
      }
      if (onCallerAbort) signal?.addEventListener('abort', onCallerAbort, { once: true })
      try {
        let sent: PoolTask = channel ? { ...task, port: channel.port2 } : task
        if (softLimit !== undefined) sent = { ...sent, timeoutMs: softLimit }
        const reply: TaskReply = await pool.run(sent, {
          ...(taskSignal ? { signal: taskSignal } : {}),
          ...(channel ? { transferList: [channel.port2] } : {}),
        })
        if (!reply.ok) throw deserializeError(reply.error)
        const out: PoolRunResult = { value: reply.value }
        if (reply.stateUpdate) out.stateUpdate = reply.stateUpdate
        if (reply.removed) out.removed = reply.removed
        return out
      } catch (e) {
        if (timedOut)
          throw new TeaError('POOL_ERROR', `timed out after ${timeoutMs} ms; its worker was terminated`, {
            where: task.where,
            details: { reason: 'timeout', timeoutMs },
          })
        if (signal?.aborted) throw cancelled()
        throw e
      } finally {
        if (timer) clearTimeout(timer)
        if (onCallerAbort) signal?.removeEventListener('abort', onCallerAbort)
        channel?.port1.close()
      }
    },
    async close() {
      closed = true
      const pool = tinypool
      tinypool = undefined
      if (pool) await pool.destroy()
    },
  }
}

/** How long a worker may take to stop its own code before it is terminated: 1 s, plus 10 % for long limits. */
function graceMs(limitMs: number): number {
  return 1000 + Math.ceil(limitMs / 10)
}

/** Answers a task's host calls on `port` with `host` (exported for the ActionContext contract suite). */
export function serveHost(port: import('node:worker_threads').MessagePort, host: HostMethods): void {
  port.on('message', (msg: HostRequest | HostNotice) => {
    const fn = Object.hasOwn(host, msg.method) ? host[msg.method] : undefined
    if ('notice' in msg) {
      try {
        fn?.(...msg.args)
      } catch {
        // a notice has no one to answer; the worker's own result still decides the task
      }
      return
    }
    const reply = (r: HostReply): void => {
      try {
        port.postMessage(r)
      } catch {
        // the task finished (port closed) before the answer was ready
      }
    }
    if (msg.method === DRAIN) return reply({ id: msg.id, ok: true, value: null })
    if (!fn) {
      reply({ id: msg.id, ok: false, error: { name: 'TeaError', code: 'POOL_ERROR', message: `no host method '${msg.method}'` } })
      return
    }
    Promise.resolve()
      .then(() => fn(...msg.args))
      .then(
        (value) => reply({ id: msg.id, ok: true, value }),
        (e) => reply({ id: msg.id, ok: false, error: serializeError(e) }),
      )
  })
}
