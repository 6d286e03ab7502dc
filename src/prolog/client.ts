/**
 * The main thread's side: every Prolog operation goes to a pool worker (task.ts), never runs here, so a query
 * that never ends is stopped by terminating its worker at the time limit while the run goes on. One pool serves
 * the process; its workers keep their engines warm for a minute and then exit (an idle worker does not keep the
 * process alive).
 */

import { TeaError } from '../core/errors.ts'
import type { Where } from '../core/issues.ts'
import { createPool, defaultConcurrency, type Pool } from '../pool/pool.ts'
import type { QueryOutcome, RunOutcome } from './engine.ts'
import { prologFiles } from './files.ts'
import type { PrologOp, PrologTask } from './task.ts'

let pool: Pool | undefined

export interface EngineCall {
  signal: AbortSignal
  /** The time limit, ms, from when the engine is ready; the worker is terminated when it is reached. */
  timeoutMs: number
  where: Where
  /** What the limit stops, for the error: "Prolog code", "the Prolog query". */
  what: string
}

export function runProlog(work: Extract<PrologOp, { op: 'run' }>, call: EngineCall): Promise<RunOutcome> {
  return onEngine(work, call) as Promise<RunOutcome>
}

export function checkProlog(work: Extract<PrologOp, { op: 'check' }>, call: EngineCall): Promise<{ line: number; message: string } | null> {
  return onEngine(work, call) as Promise<{ line: number; message: string } | null>
}

export function queryProlog(work: Extract<PrologOp, { op: 'query' }>, call: EngineCall): Promise<QueryOutcome> {
  return onEngine(work, call) as Promise<QueryOutcome>
}

/** How long a worker may take to start its engine (seconds on a board, a minute or more under emulation). */
const START_LIMIT_MS = 300_000

async function onEngine(work: PrologOp, call: EngineCall): Promise<unknown> {
  pool ??= createPool({ maxThreads: defaultConcurrency(), idleTimeoutMs: 60_000 })
  const task: PrologTask = { kind: 'prolog', files: prologFiles(), work, where: call.where }
  // The limit is the code's: its clock starts when the worker says its engine is ready. Cancelling the task
  // terminates the worker, engine and all.
  const stop = new AbortController()
  let over: TeaError | undefined
  const limit = (ms: number, error: () => TeaError): NodeJS.Timeout =>
    setTimeout(() => {
      over = error()
      stop.abort(over)
    }, ms)
  let timer = limit(
    START_LIMIT_MS,
    () => new TeaError('CODE_ERROR', `the Prolog engine did not start within ${START_LIMIT_MS / 1000} s`, { where: call.where }),
  )
  const ready = (): void => {
    clearTimeout(timer)
    timer = limit(
      call.timeoutMs,
      () =>
        new TeaError('NODE_TIMEOUT', `${call.what} ran over its time limit of ${call.timeoutMs / 1000} s and was stopped`, {
          where: call.where,
          hint: 'a loop that never ends, or a search too large: raise timeout (seconds) on the node, or settings.run_timeout',
        }),
    )
  }
  const fromCaller = (): void => stop.abort(call.signal.reason)
  if (call.signal.aborted) fromCaller()
  else call.signal.addEventListener('abort', fromCaller, { once: true })
  try {
    return (await pool.run(task, { signal: stop.signal, host: { ready } })).value
  } catch (e) {
    throw over ?? e
  } finally {
    clearTimeout(timer)
    call.signal.removeEventListener('abort', fromCaller)
  }
}
