/**
 * `run:` code as a pool task (a plan subtask's `run:` executor): the worker-side handler and the task's shape. The
 * code runs in the environment of a `run:` node (compile.ts): a vm context, guarded loops and a time limit the
 * worker survives, `console` as `log` events. Its return value, whatever it is, is the task's value.
 *
 * `ctx` is built by the caller-supplied `makeContext` (src/worker.ts passes the actions layer's remote context),
 * because this layer sits below actions and knows none of them.
 */

import type { HostCaller, PoolTask, TaskResult } from '../pool/protocol.ts'
import { errorMessage, isTeaError, TeaError, withWhere } from '../core/errors.ts'
import { formatWhere, type Where } from '../core/issues.ts'
import { compileCodeValue, type CompiledCodeValue } from './compile.ts'
import { trackTopLevel } from './track-state.ts'

export interface CodeTask extends PoolTask {
  kind: 'code'
  code: string
  /** `state` and `variables`, plus any other names the body sees (a subtask's `subtask`, `dependency_results`). */
  args: { state?: unknown; variables?: unknown; [name: string]: unknown }
  /** What `ctx` is built from in the worker; without it the code gets no `ctx`. Opaque to this layer. */
  context?: { readonly node: string }
  /** Report which top-level keys of `args.state` the code changed, as `stateUpdate`. */
  trackState?: boolean
  /** Most memory the code may take, MiB (settings.run_memory_mb). */
  memoryMb?: number
  selfTimed: true
}

export type ContextFactory = (
  context: NonNullable<CodeTask['context']>,
  state: unknown,
  where: Where | undefined,
  host: HostCaller | undefined,
) => unknown

// One cache per worker thread; it lives and dies with the thread.
const compiled = new Map<string, CompiledCodeValue>()

/** Far beyond any real limit, for code given none (vm's timeout must be a finite integer). */
const NO_LIMIT_MS = 2 ** 31 - 1

export async function runCodeTask(task: CodeTask, host: HostCaller | undefined, makeContext?: ContextFactory): Promise<TaskResult> {
  const { code, args, where } = task
  const { state, variables, ...extra } = args
  const names = Object.keys(extra).sort()
  const key = `${names.join(',')}\u0000${code}`
  let fn = compiled.get(key)
  if (!fn) {
    try {
      fn = compileCodeValue(code, undefined, { names })
    } catch (e) {
      throw codeError(where, e)
    }
    compiled.set(key, fn)
  }
  const tracker = task.trackState && isObject(state) ? trackTopLevel(state) : undefined
  const ctx = task.context && makeContext && /\bctx\b/.test(code) ? makeContext(task.context, state, where, host) : undefined
  const place = formatWhere(where)
  const node = task.context?.node ?? where?.node ?? place
  const log = (message: string): void => host?.notify('emit', { type: 'log', node, message: place ? `${place}: ${message}` : message })
  let value: unknown
  try {
    value = await fn(
      { state, variables: variables ?? {}, ctx, log, extra, ...(task.memoryMb && { memoryMb: task.memoryMb }) },
      task.timeoutMs ?? NO_LIMIT_MS,
    )
  } catch (e) {
    throw codeError(where, e, task.timeoutMs)
  }
  if (!tracker) return { value }
  const { updates, removed } = tracker.changes()
  const result: TaskResult = { value }
  if (Object.keys(updates).length > 0) result.stateUpdate = updates
  if (removed.length > 0) result.removed = removed
  return result
}

/**
 * The code's error, placed at the task's `where`: the code was compiled without a place, because one compiled
 * function serves every task with the same code. A time limit met in the worker is the pool's own timeout error,
 * so the caller sees one kind of timeout whoever stopped it.
 */
function codeError(where: Where | undefined, e: unknown, timeoutMs?: number): TeaError {
  if (isTeaError(e, 'NODE_TIMEOUT')) {
    return new TeaError('POOL_ERROR', `timed out after ${timeoutMs} ms; stopped inside its worker`, {
      where,
      details: { reason: 'timeout', timeoutMs },
    })
  }
  if (isTeaError(e)) return withWhere(e, where)
  return new TeaError('CODE_ERROR', `run: code threw: ${errorMessage(e)}`, { cause: e, where })
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
