/**
 * The worker side of the pool: tinypool imports this module in each worker thread and calls `runWorkerTask` for
 * every task. It is self-contained on purpose (everything it needs is imported here, actions lazily), so the build
 * can bundle it as one source string for a single executable. It never throws: failures come back as a
 * `{ok: false, error}` reply, keeping `code` and `details` that a thrown Error would lose in transit.
 */

import { threadId } from 'node:worker_threads'
import type { MessagePort } from 'node:worker_threads'
import { TeaError } from '../core/errors.ts'
import type { CodeTask, HostReply, HostRequest, PoolTask, TaskReply } from './protocol.ts'
import { DRAIN, serializeError } from './protocol.ts'
import { runActionTask, workerContext } from './worker-actions.ts'
import { trackTopLevel } from './track-state.ts'

type Compiled = import('../engine/code.ts').CompiledCodeValue

// One cache per worker thread; it lives and dies with the thread, never in the main thread.
const compiled = new Map<string, Compiled>()
let compiler: Promise<typeof import('../engine/code.ts')> | undefined

/** Far beyond any real limit, for code given none (vm's timeout must be a finite integer). */
const NO_LIMIT_MS = 2 ** 31 - 1

export async function runWorkerTask(task: PoolTask): Promise<TaskReply> {
  const host = task.port ? hostCaller(task.port) : undefined
  try {
    switch (task.kind) {
      case 'code':
        return await runCode(task, host)
      case 'action':
        return { ok: true, value: await runActionTask(task, host) }
      case 'probe':
        return { ok: true, value: await runProbe(task.probe, task.ms, task.value) }
    }
    return { ok: false, error: { name: 'TeaError', code: 'POOL_ERROR', message: `unknown task kind in ${JSON.stringify(task)}` } }
  } catch (e) {
    return { ok: false, error: serializeError(e) }
  } finally {
    await host?.drain()
    host?.close()
  }
}

/**
 * `run:` code in the environment of a `run:` node (engine/code.ts): a vm context without `process` or `require`,
 * guarded loops and a time limit the worker survives, `console` as `log` events. The return value is the subtask's
 * result itself (compileCodeValue), not an object of updates.
 */
async function runCode(task: CodeTask, host: HostCaller | undefined): Promise<TaskReply> {
  const { code, args, where } = task
  let fn = compiled.get(code)
  if (!fn) {
    const { compileCodeValue } = await (compiler ??= import('../engine/code.ts'))
    try {
      fn = compileCodeValue(code, LABEL)
    } catch (e) {
      throw codeError(where, e)
    }
    compiled.set(code, fn)
  }
  const tracker = task.trackState && isObject(args.state) ? trackTopLevel(args.state) : undefined
  const ctx = task.context && /\bctx\b/.test(code) ? await workerContext({ ...task.context, ...(isObject(args.state) ? { state: args.state } : {}) }, where, host) : undefined
  const node = task.context?.node ?? where
  const log = (message: string): void => host?.notify('emit', { type: 'log', node, message: `${where}: ${message}` })
  let value: unknown
  try {
    value = await fn({ ...args, state: args.state, variables: args.variables ?? {}, ctx, log }, task.timeoutMs ?? NO_LIMIT_MS)
  } catch (e) {
    throw codeError(where, e, task.timeoutMs)
  }
  if (!tracker) return { ok: true, value }
  const { updates, removed } = tracker.changes()
  const reply: TaskReply = { ok: true, value }
  if (Object.keys(updates).length > 0) reply.stateUpdate = updates
  if (removed.length > 0) reply.removed = removed
  return reply
}

const LABEL = '(run: code)'

/**
 * The compiler's errors name a node (`node '…': run: code …`); here the code belongs to `where`. A time limit
 * met in the worker is the pool's own timeout error, so the caller sees one kind of timeout whoever stopped it.
 */
function codeError(where: string, e: unknown, timeoutMs?: number): Error {
  const s = serializeError(e)
  if (s.code === 'NODE_TIMEOUT')
    return new TeaError('POOL_ERROR', `${where}: timed out after ${timeoutMs} ms; stopped inside its worker`, { details: { reason: 'timeout', timeoutMs } })
  const cause = (e as { cause?: unknown }).cause
  if (s.code === 'CODE_ERROR' && cause !== undefined) {
    const c = serializeError(cause)
    if (c.name === 'TeaError' && c.code) return Object.assign(new Error(c.message), c)
    return new TeaError('CODE_ERROR', `${where}: run code threw: ${c.name === 'Error' ? '' : `${c.name}: `}${c.message}`)
  }
  const syntax = /has a syntax error(.*)$/s.exec(s.message)
  if (syntax) return new TeaError('CODE_ERROR', `${where}: run code does not compile: syntax error${syntax[1]}`)
  if (s.name === 'TeaError') return Object.assign(new Error(s.message), s)
  return new TeaError('CODE_ERROR', `${where}: run code threw: ${s.message}`)
}

async function runProbe(probe: string, ms = 0, value: unknown = null): Promise<unknown> {
  if (probe === 'thread') return threadId
  if (probe === 'sleep') await new Promise((r) => setTimeout(r, ms))
  if (probe === 'spin') {
    const until = ms > 0 ? Date.now() + ms : Infinity
    let x = 0
    while (Date.now() < until) x++
    return x
  }
  return value
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export interface HostCaller {
  call(method: string, ...args: unknown[]): Promise<unknown>
  notify(method: string, ...args: unknown[]): void
  /** Resolves once the main thread has handled every notice sent so far (they would be lost when the port closes). */
  drain(): Promise<void>
  close(): void
}

function hostCaller(port: MessagePort): HostCaller {
  let next = 1
  let noticed = false
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>()
  port.on('message', (reply: HostReply) => {
    const p = pending.get(reply.id)
    if (!p) return
    pending.delete(reply.id)
    if (reply.ok) p.resolve(reply.value)
    else p.reject(Object.assign(new Error(reply.error.message), reply.error))
  })
  return {
    call(method, ...args) {
      const id = next++
      const req: HostRequest = { id, method, args }
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject })
        port.postMessage(req)
      })
    },
    notify(method, ...args) {
      noticed = true
      port.postMessage({ notice: true, method, args })
    },
    async drain() {
      // The task's reply travels on tinypool's own port, which may overtake this one; a round trip on this port
      // comes back only after every earlier notice on it was handled.
      if (!noticed) return
      noticed = false
      await this.call(DRAIN).catch(() => {})
    },
    close() {
      port.close()
    },
  }
}
