/**
 * The pool's worker entry: the module tinypool loads in each worker thread (from source through
 * src/pool/worker-tsx.mjs, from the bundle as the bundle itself; see src/pool/worker-location.ts). It wires the
 * generic worker (src/pool/worker.ts) to the handlers of each task kind, which live with their layers (the
 * features' in feature-list.ts, each loading its feature on its first task), and builds the worker's registry
 * once, lazily, from the same composition root as the main thread's.
 */

import { remoteContext, runActionTask, type ActionTask, type TaskContext } from './actions/remote.ts'
import type { Registry } from './actions/registry.ts'
import { runCodeTask, type CodeTask } from './code/task.ts'
import { lazyRegistry } from './catalog.ts'
import { featureTaskHandlers } from './feature-list.ts'
import type { PoolTask, TaskHandler, TaskReply } from './pool/protocol.ts'
import { dispatchTask } from './pool/worker.ts'

let registry: Registry | undefined
const registryOf = (): Registry => (registry ??= lazyRegistry())

/** The handlers of every task kind this build's workers run (test/support/probe-worker.ts adds its own to them). */
export const workerHandlers: Readonly<Record<string, TaskHandler>> = {
  action: async (task: ActionTask, host) => {
    const r = registryOf()
    await r.load([task.action]) // its group, on first use; ctx.invoke loads what the action runs
    return runActionTask(task, host, r)
  },
  code: (task: CodeTask, host) =>
    runCodeTask(task, host, (context, state, where, h) =>
      remoteContext({ ...(context as unknown as TaskContext), ...(isObject(state) ? { state } : {}) }, where, h, registryOf()),
    ),
  ...featureTaskHandlers(),
}

export function runWorkerTask(task: PoolTask): Promise<TaskReply> {
  return dispatchTask(task, workerHandlers)
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
