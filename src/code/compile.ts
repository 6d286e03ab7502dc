/**
 * The `run:` sandbox: a JavaScript function body receiving `state`, `variables`, `ctx` and `console` (plus any
 * names its caller adds, e.g. a plan subtask's `subtask` and `dependency_results`) and returning a value (SPEC
 * §3.2). It is the agent author's own code — trusted, not a security boundary — but it still runs in a separate vm
 * context (no `require`; `process` only through host objects it is handed) so a typo cannot reach into the runtime
 * by accident, and it runs with a time limit: loops are guarded (loop-guard.ts) and an awaited promise races a
 * timer. This layer knows no engine, action or feature: the engine, the agent loader and the pool worker all use it.
 */

import vm from 'node:vm'
import { isTeaError, TeaError } from '../core/errors.ts'
import type { Where } from '../core/issues.ts'
import { isPlainObject } from '../core/util.ts'
import { guardBody } from './loop-guard.ts'
import { CONTEXT_LIMITS, memoryCheck, refuseOver } from './memory-limit.ts'

export interface CodeScope {
  state: unknown
  variables: unknown
  ctx: unknown
  /** Where `console.log` inside the code goes (never stdout: that carries the final state). */
  log(message: string): void
  /** Values of the extra names the code was compiled with (`CodeOptions.names`). */
  extra?: Record<string, unknown>
  /** Most memory the code may take, MiB (`settings.run_memory_mb`; memory-limit.ts); none when absent. */
  memoryMb?: number
}

export interface CodeOptions {
  /** Names the body sees beyond `state`, `variables`, `ctx` and `console`. */
  names?: readonly string[]
}

export type CompiledCode = (scope: CodeScope, timeoutMs: number) => Promise<Record<string, unknown>>
export type CompiledCodeValue = (scope: CodeScope, timeoutMs: number) => Promise<unknown>

const BASE_PARAMS = ['state', 'variables', 'ctx', 'console']

let sharedContext: vm.Context | undefined
function context(): vm.Context {
  // Created on first use, not at import time (STYLE 3).
  // Timers are the host's, so async code can wait; everything else is the context's own built-ins, those that
  // allocate what they are told held to the code's memory limit (memory-limit.ts).
  if (!sharedContext) {
    sharedContext = vm.createContext({
      __fn: null,
      __args: null,
      __refuse: refuseOver,
      setTimeout,
      clearTimeout,
      setInterval,
      clearInterval,
    })
    vm.runInContext(CONTEXT_LIMITS, sharedContext)
  }
  return sharedContext
}

/**
 * Compiles once; throws CODE_ERROR with the line of a syntax error. The code must return an object of updates.
 * `where` (the node, for an agent's `run:`) goes on every error the code raises; a caller that compiles once for
 * many places (a plan's subtasks) gives none and puts its own on what it catches.
 */
export function compileCode(source: string, where?: Where, options: CodeOptions = {}): CompiledCode {
  const run = compileCodeValue(source, where, options)
  return async (scope, timeoutMs) => {
    const value = await run(scope, timeoutMs)
    if (value === undefined || value === null) return {}
    if (!isPlainObject(value)) {
      throw new TeaError(
        'CODE_ERROR',
        `run: code must return an object of state updates, got ${Array.isArray(value) ? 'an array' : typeof value}`,
        { where },
      )
    }
    return value
  }
}

/** Like compileCode, but the code's return value comes back as it is (plan subtasks return any result). */
export function compileCodeValue(source: string, where?: Where, options: CodeOptions = {}): CompiledCodeValue {
  // The name stack traces give the code's frames.
  const filename = where?.node === undefined ? 'run:' : `node '${where.node}' run:`
  const names = options.names ?? []
  const params = [...BASE_PARAMS, ...names, '__g', '__gi']
  // A body that awaits runs as an async function; the others stay plain calls (no promise per call). The loop
  // guard's counter is declared inside that function: captured from outside, it would live in a context slot,
  // which made tight guarded loops ~2x slower.
  const awaits = /\bawait\b/.test(source)
  const wrap = (code: string): string => (awaits ? `return (async () => {\n${code}\n})()` : code)
  let fn: Function
  let guarded = true
  try {
    fn = vm.compileFunction(wrap(guardBody(source)), params, { parsingContext: context(), filename })
  } catch {
    guarded = false
    try {
      fn = vm.compileFunction(wrap(source), params, { parsingContext: context(), filename })
    } catch (e) {
      // The line in the compiled text, less the async wrapper's first line: the body's own line.
      const at = /:(\d+)\n/.exec((e as Error).stack ?? '')?.[1]
      const line = at === undefined ? undefined : Number(at) - (awaits ? 1 : 0)
      throw new TeaError('CODE_ERROR', `run: code has a syntax error${line ? ` at line ${line}` : ''}: ${(e as Error).message}`, {
        where,
        ...(line && { details: { language: 'javascript', line } }),
      })
    }
  }
  // Lines the compiled text has above the body's first: the loop guard's counter, the async wrapper.
  const above = (guarded ? 1 : 0) + (awaits ? 1 : 0)
  const caller = guarded ? undefined : new vm.Script('__fn(...__args)')
  return async (scope, timeoutMs) => {
    const deadline = Date.now() + timeoutMs
    const overtime = (): TeaError => new TeaError('NODE_TIMEOUT', `run: code exceeded its time limit of ${timeoutMs / 1000} s`, { where })
    const memory = memoryCheck(scope.memoryMb, where)
    let measured = 0
    // Called by the guarded loops every 1,024 iterations (loop-guard.ts counts inline); the memory is measured at
    // most once a millisecond (a measure costs about as much as 1,024 iterations of a tight loop).
    const guard = (): true => {
      const now = Date.now()
      if (now > deadline) throw overtime()
      if (memory && now !== measured) {
        measured = now
        memory()
      }
      return true
    }
    function* guardIter(it: Iterable<unknown>): Generator<unknown> {
      let n = 0
      for (const x of it) {
        if ((++n & 1023) === 0) guard()
        yield x
      }
    }
    const con = { log: (...a: unknown[]) => scope.log(a.map(String).join(' ')) }
    const extra = names.map((n) => scope.extra?.[n])
    const args = [
      scope.state,
      scope.variables,
      scope.ctx,
      { log: con.log, info: con.log, warn: con.log, error: con.log },
      ...extra,
      guard,
      guardIter,
    ]
    let value: unknown
    try {
      if (caller) {
        const c = context()
        c.__fn = fn
        c.__args = args
        value = caller.runInContext(c, { timeout: timeoutMs })
      } else value = fn(...args)
      if (
        value instanceof Promise ||
        (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function')
      ) {
        value = await raceDeadline(value as Promise<unknown>, deadline - Date.now(), overtime)
      }
    } catch (e) {
      if (isTeaError(e)) throw e
      if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw overtime()
      const line = where?.node === undefined ? undefined : bodyLine(e, filename, above, source)
      const at = line ? ` at line ${line} (\`${excerpt(source, line)}\`)` : ''
      throw new TeaError('CODE_ERROR', `run: code threw${at}: ${thrown(e)}${pythonHint(e)}`, {
        cause: e,
        where,
        ...(line && { details: { language: 'javascript', line } }),
      })
    }
    return value
  }
}

/**
 * The line of the body where `e` was thrown: the innermost frame of the code's own file in its stack, less the
 * lines the compiled text has `above` the body. Undefined for a one-line body (the line says nothing), for a value
 * thrown without a stack, and for an error raised outside the code (the host's functions it called). Only a node's
 * code says it: a plan subtask's error text goes into the model's replan prompt, and a cassette's key holds it.
 */
function bodyLine(e: unknown, filename: string, above: number, source: string): number | undefined {
  const stack = typeof e === 'object' && e !== null ? (e as Error).stack : undefined
  if (typeof stack !== 'string' || !source.trim().includes('\n')) return undefined
  const file = `${filename}:`
  for (const frame of stack.split('\n')) {
    if (!/^\s+at /.test(frame)) continue
    const at = frame.lastIndexOf(file)
    const m = at < 0 ? null : /^(\d+):\d+/.exec(frame.slice(at + file.length))
    if (!m) continue
    const line = Number(m[1]) - above
    return line >= 1 && line <= source.split('\n').length ? line : undefined
  }
  return undefined
}

/** Line `line` of `source`, trimmed and cut to 60 characters, for the message. */
function excerpt(source: string, line: number): string {
  const text = (source.split('\n')[line - 1] ?? '').trim()
  return text.length > 60 ? `${text.slice(0, 59)}…` : text
}

/** Python's methods that JavaScript values lack: calling one means the code is Python that happened to parse as JS. */
const PYTHON_METHOD = /\.(get|items|keys|values|append|setdefault|startswith|endswith|strip|lower|upper) is not a function$/

/**
 * TEA's `run:` code is Python, and some of it also parses as JavaScript (`return {"a": state.get("x")}`): tea runs
 * it as JavaScript, and it fails on a Python method. Said so, with the fix, instead of a bare TypeError.
 */
function pythonHint(e: unknown): string {
  const message = typeof e === 'object' && e !== null ? (e as Error).message : undefined
  if (typeof message !== 'string' || !PYTHON_METHOD.test(message)) return ''
  return (
    " (this run: code ran as JavaScript, which has no such method; if it is TEA's Python, add `language: python` to the node, " +
    'or `settings.run_language: python` to the file)'
  )
}

/**
 * What the code threw, named when it is not a plain Error (`RangeError: bad input`). Errors made inside the vm
 * context are not `instanceof` this realm's Error, so they are recognised by shape.
 */
function thrown(e: unknown): string {
  if (typeof e !== 'object' || e === null || typeof (e as Error).message !== 'string') return String(e)
  const { name, message } = e as Error
  return typeof name === 'string' && name !== 'Error' ? `${name}: ${message}` : message
}

function raceDeadline<T>(p: Promise<T>, ms: number, overtime: () => TeaError): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(overtime()), Math.max(0, ms))
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    )
  })
}
