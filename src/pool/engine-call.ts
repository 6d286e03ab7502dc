/**
 * Running a task on a language engine that lives on a pool worker (the Prolog and Lua features): one pool for the
 * process, whose workers keep their engines warm for a minute and then exit (an idle worker does not keep the
 * process alive). A query inside WebAssembly cannot be interrupted from inside, so the time limit is kept here: at
 * the limit the task is cancelled and its worker terminated, engine and all, and the run goes on. The limit is the
 * code's, so its clock starts when the worker says its engine is ready (the handler's host call `ready`):
 * starting an engine (seconds on a small board) is not the code's time.
 */

import { TeaError } from '../core/errors.ts'
import type { Where } from '../core/issues.ts'
import { createPool, defaultConcurrency, type Pool } from './pool.ts'
import type { HostCaller, PoolTask, TaskResult } from './protocol.ts'

export interface EngineCall {
  signal: AbortSignal
  /** The time limit, ms, from when the engine is ready. */
  timeoutMs: number
  where: Where
  /** What the limit stops, for the error: "the Prolog code". */
  what: string
}

/** How long a worker may take to start its engine (seconds on a board, a minute or more under emulation). */
const START_LIMIT_MS = 300_000

let pool: Pool | undefined

export async function callEngine(task: PoolTask, call: EngineCall): Promise<unknown> {
  pool ??= createPool({ maxThreads: defaultConcurrency(), idleTimeoutMs: 60_000 })
  const stop = new AbortController()
  let over: TeaError | undefined
  const limit = (ms: number, error: () => TeaError): NodeJS.Timeout =>
    setTimeout(() => {
      over = error()
      stop.abort(over)
    }, ms)
  let timer = limit(
    START_LIMIT_MS,
    () => new TeaError('CODE_ERROR', `the engine for ${call.what} did not start within ${START_LIMIT_MS / 1000} s`, { where: call.where }),
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

/**
 * The worker's side of a language feature's pool task (src/{prolog,lua,python}/task.ts): one engine per worker
 * thread, started by the first task that needs it and kept for the next (a start that fails is tried again by the
 * next task). Each task tells the caller when the engine is ready (after `prepare`, when the engine has more to
 * make ready for each task), so the code's clock starts then; `run` does the task's work on it. An engine that
 * says it is `spent` after a task is dropped, and the next task starts a fresh one.
 */
export function engineTask<Files, Engine, Work>(
  start: (files: Files) => Promise<Engine>,
  run: (engine: Engine, work: Work) => unknown,
  options: { prepare?: (engine: Engine) => Promise<void>; spent?: (engine: Engine) => boolean } = {},
): (task: PoolTask & { files: Files; work: Work }, host: HostCaller | undefined) => Promise<TaskResult> {
  let engine: Promise<Engine> | undefined
  return async (task, host) => {
    engine ??= start(task.files).catch((e: unknown) => {
      engine = undefined
      throw e
    })
    const ready = await engine
    await options.prepare?.(ready)
    host?.notify('ready')
    await host?.drain()
    try {
      return { value: await run(ready, task.work) }
    } finally {
      if (options.spent?.(ready)) engine = undefined
    }
  }
}
