/**
 * The pool's worker entry: the module tinypool loads in each worker thread (from source through
 * src/pool/worker-tsx.mjs, from the bundle as the bundle itself; see src/pool/worker-location.ts). It wires the
 * generic worker (src/pool/worker.ts) to the handlers of each task kind, which live with their layers, and builds
 * the worker's registry once, lazily, from the same composition root as the main thread's.
 */

import { remoteContext, runActionTask, type ActionTask, type TaskContext } from './actions/remote.ts'
import type { Registry } from './actions/registry.ts'
import { runCodeTask, type CodeTask } from './code/task.ts'
import { buildRegistry, featureTaskHandlers } from './features.ts'
import { runProbeTask, type ProbeTask } from './pool/probe.ts'
import type { PoolTask, TaskHandler, TaskReply } from './pool/protocol.ts'
import { dispatchTask } from './pool/worker.ts'

let registry: Registry | undefined
const registryOf = (): Registry => (registry ??= buildRegistry())

const HANDLERS: Readonly<Record<string, TaskHandler>> = {
  action: (task: ActionTask, host) => runActionTask(task, host, registryOf()),
  code: (task: CodeTask, host) =>
    runCodeTask(task, host, (context, state, where, h) =>
      remoteContext({ ...(context as unknown as TaskContext), ...(isObject(state) ? { state } : {}) }, where, h, registryOf()),
    ),
  probe: (task: ProbeTask) => runProbeTask(task),
  ...featureTaskHandlers(),
}

export function runWorkerTask(task: PoolTask): Promise<TaskReply> {
  return dispatchTask(task, HANDLERS)
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
