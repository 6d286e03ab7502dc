/**
 * What crosses the thread boundary between the pool and its workers. Everything here must survive structured
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

/** What an action or `run:` code in a worker knows of its run; `ctx` is built from it in the worker. */
export interface TaskContext {
  runId: string
  node: string
  state: Record<string, unknown>
  variables: Record<string, unknown>
  settings: Record<string, unknown>
  dataDir?: string
}

/** The names a `run:` body sees, as for a `run:` node (engine/code.ts), plus a plan subtask's own two. */
export interface CodeArgs {
  state?: unknown
  variables?: unknown
  subtask?: unknown
  dependency_results?: unknown
}

/**
 * A `run:` body, compiled once per worker by the engine's compiler (same vm context, loop guard and time limit as a
 * `run:` node) and called with `args`; its return value, whatever it is, is the task's value. With `context`, the
 * code also gets `ctx` (an ActionContext whose model, store and events are the main thread's, through `port`), and
 * `console` sends `log` events there; without a port, logs are dropped — never written to stdout.
 */
export interface CodeTask {
  kind: 'code'
  code: string
  args: CodeArgs
  context?: TaskContext
  /** Report which top-level keys of `args.state` the code changed, as `stateUpdate`. */
  trackState?: boolean
  /** The code's own time limit (ms), enforced inside the worker, which survives it; set by the pool from `timeoutMs`. */
  timeoutMs?: number
  /** Where the code came from, for error messages (e.g. `subtask 3`). */
  where: string
  port?: MessagePort
}

/** A registered action, by name, with parameters already rendered in the main thread. */
export interface ActionTask {
  kind: 'action'
  action: string
  params: unknown
  context: TaskContext
  where: string
  port?: MessagePort
}

/** Test and benchmark tasks: `sleep` resolves after `ms`, `spin` busy-loops for `ms` (or forever when omitted). */
export interface ProbeTask {
  kind: 'probe'
  probe: 'echo' | 'spin' | 'sleep' | 'thread'
  ms?: number
  value?: unknown
  where: string
  port?: MessagePort
}

export type PoolTask = CodeTask | ActionTask | ProbeTask

export interface SerializedError {
  name: string
  message: string
  code?: string
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

export type HostReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError }

export function serializeError(e: unknown): SerializedError {
  if (typeof e === 'object' && e !== null) {
    const err = e as { name?: unknown; message?: unknown; code?: unknown; details?: unknown; hint?: unknown }
    const out: SerializedError = {
      name: typeof err.name === 'string' ? err.name : 'Error',
      message: typeof err.message === 'string' ? err.message : String(e),
    }
    if (typeof err.code === 'string') out.code = err.code
    if (typeof err.details === 'object' && err.details !== null) {
      try {
        out.details = structuredClone(err.details) as Record<string, unknown>
      } catch {
        // details that cannot be cloned are dropped rather than losing the error itself
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
    const opts: { details?: Record<string, unknown>; hint?: string } = {}
    if (s.details) opts.details = s.details
    if (s.hint) opts.hint = s.hint
    return new TeaError(s.code as ErrorCode, s.message, opts)
  }
  const e = new Error(s.message)
  e.name = s.name
  return e
}
