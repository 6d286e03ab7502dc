/**
 * The worker side of the pool, generic as tinypool's own worker: it receives a task, hands it to the handler for
 * its `kind`, and turns the outcome into a reply. It never throws: failures come back as `{ok: false, error}`,
 * keeping `code` and `details` that a thrown Error would lose in transit. The handlers are not imported here; the
 * composition root (src/worker.ts) passes them, so the pool knows nothing of actions, code or features. A batch
 * (protocol.ts, BatchTask) is its members run here one after the other, each reported as it finishes.
 */

import type { MessagePort } from 'node:worker_threads'
import { cancelled } from '../core/signals.ts'
import type {
  BatchTask,
  HostAbort,
  HostCaller,
  HostReply,
  HostRequest,
  MemberReport,
  PoolTask,
  TaskHandler,
  TaskReply,
} from './protocol.ts'
import { BATCH, CLAIMED, DRAIN, UNCLAIMED, serializeError } from './protocol.ts'

type Handlers = Readonly<Record<string, TaskHandler>>

export async function dispatchTask(task: PoolTask, handlers: Handlers): Promise<TaskReply> {
  if (task.kind === BATCH) return runBatch(task as BatchTask, handlers)
  const host = task.port ? hostCaller(task.port) : undefined
  try {
    return await runTask(task, handlers, host)
  } finally {
    await host?.drain()
    host?.close()
  }
}

async function runTask(task: PoolTask, handlers: Handlers, host: HostCaller | undefined): Promise<TaskReply> {
  try {
    const handler = Object.hasOwn(handlers, task.kind) ? handlers[task.kind] : undefined
    if (!handler) {
      const message = `no handler for task kind '${task.kind}'`
      return { ok: false, error: { name: 'TeaError', code: 'POOL_ERROR', message, ...(task.where && { where: task.where }) } }
    }
    const result = await handler(task, host)
    const reply: TaskReply = { ok: true, value: result.value }
    if (result.stateUpdate) reply.stateUpdate = result.stateUpdate
    if (result.removed) reply.removed = result.removed
    return reply
  } catch (e) {
    return { ok: false, error: serializeError(e) }
  }
}

/**
 * The members share the batch's port for their host calls, and each report follows its member's notices on that
 * port, so the caller has handled a member's events before it learns the member finished (no drain per member).
 * The next member is claimed before the report goes out, so the report can say it started.
 */
async function runBatch(batch: BatchTask, handlers: Handlers): Promise<TaskReply> {
  const { tasks, claims, port } = batch
  const host = hostCaller(port)
  let ran = 0
  try {
    for (let i = 0; i < tasks.length; i++) {
      const reply = await runTask(tasks[i]!, handlers, host)
      ran++
      const next = reply.ok && i + 1 < tasks.length && Atomics.compareExchange(claims, i + 1, UNCLAIMED, CLAIMED) === UNCLAIMED
      if (!report(port, { member: i, reply, next })) break
      if (!next) break
    }
  } finally {
    host.close()
  }
  return { ok: true, value: ran }
}

/** Posts a member's report; a value that cannot cross the thread boundary fails the member instead. */
function report(port: MessagePort, r: MemberReport): boolean {
  try {
    port.postMessage(r)
    return true
  } catch (e) {
    port.postMessage({ member: r.member, reply: { ok: false, error: serializeError(e) }, next: false } satisfies MemberReport)
    return false
  }
}

function hostCaller(port: MessagePort): HostCaller {
  let next = 1
  let noticed = false
  const aborted = new AbortController()
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>()
  port.on('message', (msg: HostReply | HostAbort) => {
    if ('abort' in msg) {
      aborted.abort(cancelled())
      return
    }
    const p = pending.get(msg.id)
    if (!p) return
    pending.delete(msg.id)
    if (msg.ok) p.resolve(msg.value)
    else p.reject(Object.assign(new Error(msg.error.message), msg.error))
  })
  return {
    signal: aborted.signal,
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
