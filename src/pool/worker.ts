/**
 * The worker side of the pool: tinypool imports this module in each worker thread and calls `runWorkerTask` for
 * every task. It is self-contained on purpose (everything it needs is imported here, actions lazily), so the build
 * can bundle it as one source string for a single executable. It never throws: failures come back as a
 * `{ok: false, error}` reply, keeping `code` and `details` that a thrown Error would lose in transit.
 */

import { threadId } from 'node:worker_threads'
import type { MessagePort } from 'node:worker_threads'
import type { HostReply, HostRequest, PoolTask, TaskReply } from './protocol.ts'
import { serializeError } from './protocol.ts'
import { runActionTask } from './worker-actions.ts'
import { trackTopLevel } from './track-state.ts'

type Compiled = (...args: unknown[]) => Promise<unknown>

// One cache per worker thread; it lives and dies with the thread, never in the main thread.
const compiled = new Map<string, Compiled>()
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => Compiled

export async function runWorkerTask(task: PoolTask): Promise<TaskReply> {
  const host = task.port ? hostCaller(task.port) : undefined
  try {
    switch (task.kind) {
      case 'code':
        return await runCode(task.code, task.args, task.trackState === true, task.where)
      case 'action':
        return { ok: true, value: await runActionTask(task, host) }
      case 'probe':
        return { ok: true, value: await runProbe(task.probe, task.ms, task.value) }
    }
    return { ok: false, error: { name: 'TeaError', code: 'POOL_ERROR', message: `unknown task kind in ${JSON.stringify(task)}` } }
  } catch (e) {
    return { ok: false, error: serializeError(e) }
  } finally {
    host?.close()
  }
}

async function runCode(code: string, args: Record<string, unknown>, track: boolean, where: string): Promise<TaskReply> {
  const names = Object.keys(args)
  const key = `${names.join(',')}\n${code}`
  let fn = compiled.get(key)
  if (!fn) {
    try {
      fn = new AsyncFunction(...names, code)
    } catch (e) {
      throw codeError(where, 'does not compile', e)
    }
    compiled.set(key, fn)
  }
  const tracker = track && isObject(args.state) ? trackTopLevel(args.state) : undefined
  const values = names.map((n) => args[n])
  let value: unknown
  try {
    value = await fn(...values)
  } catch (e) {
    throw codeError(where, 'threw', e)
  }
  if (!tracker) return { ok: true, value }
  const { updates, removed } = tracker.changes()
  const reply: TaskReply = { ok: true, value }
  if (Object.keys(updates).length > 0) reply.stateUpdate = updates
  if (removed.length > 0) reply.removed = removed
  return reply
}

function codeError(where: string, what: string, e: unknown): Error {
  const s = serializeError(e)
  if (s.name === 'TeaError') return Object.assign(new Error(s.message), s)
  const err = new Error(`${where}: run code ${what}: ${s.name === 'Error' ? '' : `${s.name}: `}${s.message}`)
  return Object.assign(err, { name: 'TeaError', code: 'CODE_ERROR' })
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
  close(): void
}

function hostCaller(port: MessagePort): HostCaller {
  let next = 1
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
      port.postMessage({ notice: true, method, args })
    },
    close() {
      port.close()
    },
  }
}
