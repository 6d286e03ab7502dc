/**
 * What crosses the thread boundary between the pool and its workers. The pool is a generic transport, as
 * tinypool is: it knows tasks only by `kind`, and nothing here knows actions, code or features. Everything here must survive structured
 * cloning, which is also what gives each task its own deep copy of the state. Errors travel as plain records
 * because cloning an Error keeps only its message and one of the standard names, dropping `code`.
 *
 * A task may carry a MessagePort (`port`) on which the worker calls back into the main thread ("host calls"):
 * `{id, method, args}` requests answered by `{id, ok, value | error}`, and `{notice: true, method, args}` one-way
 * messages. That is how an action running in a worker reaches the run's model client, store and event stream
 * without opening its own (one cassette, one LMDB writer, one event order).
 */

import type { MessagePort } from 'node:worker_threads'
import { TeaError } from '../core/errors.ts'
import type { ErrorCode } from '../core/errors.ts'
import type { Issue, Where } from '../core/issues.ts'

/**
 * A task. The pool knows only `kind`, which the worker entry maps to a handler (src/worker.ts wires them: `code`
 * in src/code/task.ts, `action` in src/actions/remote.ts, `probe` in ./probe.ts); every other field is the
 * handler's own and must survive structured cloning.
 */
export interface PoolTask {
  kind: string
  /** Where the task came from (e.g. `{subtask: '3'}`); the errors it fails with carry it. */
  where?: Where
  /**
   * The handler enforces `timeoutMs` itself and survives it (`run:` code's loop guard), so the pool terminates the
   * worker only if that fails, after a grace period.
   */
  selfTimed?: boolean
  /** The time limit (ms) the handler enforces when `selfTimed`; set by the pool from RunOptions.timeoutMs. */
  timeoutMs?: number
  port?: MessagePort
}

/** What a handler returns: the task's value, and for state-tracking code what it changed. */
export interface TaskResult {
  value: unknown
  stateUpdate?: Record<string, unknown>
  removed?: string[]
}

/** Main-thread methods a worker task calls over its port. */
export interface HostCaller {
  call(method: string, ...args: unknown[]): Promise<unknown>
  notify(method: string, ...args: unknown[]): void
  /** Fires when the task's caller gave up on it (cancelled), before the worker is terminated. */
  readonly signal: AbortSignal
  /** Resolves once the main thread has handled every notice sent so far (they would be lost when the port closes). */
  drain(): Promise<void>
  close(): void
}

/** A worker-side task handler; `host` is there when the task was sent with host methods. */
export type TaskHandler = (task: any, host: HostCaller | undefined) => Promise<TaskResult>

export interface SerializedError {
  name: string
  message: string
  code?: string
  where?: Where
  issues?: Issue[]
  details?: Record<string, unknown>
  hint?: string
}

export type TaskReply =
  | { ok: true; value: unknown; stateUpdate?: Record<string, unknown>; removed?: string[] }
  | { ok: false; error: SerializedError }

export interface HostRequest {
  id: number
  method: string
  args: unknown[]
}
export interface HostNotice {
  notice: true
  method: string
  args: unknown[]
}
/** A host method every port answers: its reply means every notice sent before it has been handled. */
export const DRAIN = '__drain'

/** Sent by the pool (never answered) when the task's caller aborts, so the worker's signal fires. */
export interface HostAbort {
  abort: true
}

export type HostReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError }

/**
 * Several tasks for one worker, run one after the other (pool.runBatch): one hand-over to a worker thread instead of
 * one per task. Each member is claimed before it starts: `claims[i]` (shared memory) goes 0 → 1 when the worker
 * takes member i and 0 → 2 when the caller takes it back; whoever swaps first wins, so a member either runs here or
 * not at all. The caller claims member 0 when it sends the batch. The worker stops at the first member it cannot
 * claim or that fails. Its report of each member (a `MemberReport` on `port`, on which the members' host calls
 * travel too) says whether it claimed the next one, so the caller learns that a member started with no message of
 * its own. The task's own reply comes when the worker is done with the batch.
 */
export interface BatchTask extends PoolTask {
  kind: typeof BATCH
  tasks: PoolTask[]
  claims: Int32Array
  port: MessagePort
}
export const BATCH = '__batch'

/** Claim states of a batch member. */
export const UNCLAIMED = 0
export const CLAIMED = 1
export const WITHDRAWN = 2

/** Member `member` of a batch finished with `reply`; `next`: the worker claimed the member after it, now starting. */
export interface MemberReport {
  member: number
  reply: TaskReply
  next: boolean
}

export function serializeError(e: unknown): SerializedError {
  if (typeof e === 'object' && e !== null) {
    const err = e as {
      name?: unknown
      message?: unknown
      code?: unknown
      where?: unknown
      issues?: unknown
      details?: unknown
      hint?: unknown
    }
    const out: SerializedError = {
      name: typeof err.name === 'string' ? err.name : 'Error',
      message: typeof err.message === 'string' ? err.message : String(e),
    }
    if (typeof err.code === 'string') out.code = err.code
    for (const key of ['where', 'issues', 'details'] as const) {
      if (typeof err[key] !== 'object' || err[key] === null) continue
      try {
        out[key] = structuredClone(err[key]) as never
      } catch {
        // what cannot be cloned is dropped rather than losing the error itself
      }
    }
    if (typeof err.hint === 'string') out.hint = err.hint
    return out
  }
  return { name: 'Error', message: typeof e === 'string' ? e : JSON.stringify(e) }
}

/** A TeaError again when it was one; otherwise a plain Error with the original name and message. */
export function deserializeError(s: SerializedError): Error {
  if (s.name === 'TeaError' && s.code) {
    return new TeaError(s.code as ErrorCode, s.message, {
      ...(s.where && { where: s.where }),
      ...(s.issues && { issues: s.issues }),
      ...(s.details && { details: s.details }),
      ...(s.hint && { hint: s.hint }),
    })
  }
  const e = new Error(s.message)
  e.name = s.name
  return e
}
