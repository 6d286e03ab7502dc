/**
 * The main thread's side of a task's host port (protocol.ts): requests are answered by the host method of that
 * name, notices are handed to it with no answer. Anything else on the port (a batch's member reports) is left to
 * whoever else listens.
 */

import type { MessagePort } from 'node:worker_threads'
import type { HostNotice, HostReply, HostRequest } from './protocol.ts'
import { DRAIN, serializeError } from './protocol.ts'

/** Main-thread functions a worker task may call back (see protocol.ts), by method name. */
export type HostMethods = Record<string, (...args: any[]) => unknown>

/** Answers a task's host calls on `port` with `host` (exported for the ActionContext contract suite). */
export function serveHost(port: MessagePort, host: HostMethods): void {
  const handle = hostHandler(port, host)
  port.on('message', handle)
}

/** Handles one message from a task's port; false when it is not a host call or notice. */
export function hostHandler(port: MessagePort, host: HostMethods): (msg: unknown) => boolean {
  return (message) => {
    const msg = message as HostRequest | HostNotice
    if (typeof msg !== 'object' || msg === null || typeof msg.method !== 'string') return false
    const fn = Object.hasOwn(host, msg.method) ? host[msg.method] : undefined
    if ('notice' in msg) {
      try {
        fn?.(...msg.args)
      } catch {
        // a notice has no one to answer; the worker's own result still decides the task
      }
      return true
    }
    const reply = (r: HostReply): void => {
      try {
        port.postMessage(r)
      } catch {
        // the task finished (port closed) before the answer was ready
      }
    }
    if (msg.method === DRAIN) {
      reply({ id: msg.id, ok: true, value: null })
      return true
    }
    if (!fn) {
      reply({ id: msg.id, ok: false, error: { name: 'TeaError', code: 'POOL_ERROR', message: `no host method '${msg.method}'` } })
      return true
    }
    Promise.resolve()
      .then(() => fn(...msg.args))
      .then(
        (value) => reply({ id: msg.id, ok: true, value }),
        (e) => reply({ id: msg.id, ok: false, error: serializeError(e) }),
      )
    return true
  }
}
