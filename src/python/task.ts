/**
 * The worker side of the Python feature: a pool task of kind `python` runs on this worker thread's Python engine,
 * started by the first task and kept (src/pool/engine-call.ts tells how the limit and the worker's end work). The
 * engine hands each run an interpreter of its own (engine.ts), so "ready" is told only once that one has started:
 * the code's time limit does not pay for an interpreter still restoring.
 */

import type { HostCaller, PoolTask, TaskResult } from '../pool/protocol.ts'
import { PythonEngine, type PythonFiles } from './engine.ts'

export type PythonOp =
  | {
      op: 'run'
      code: string
      state: unknown
      variables: unknown
      workspace?: string
      /** MiB the code may take (settings.run_memory_mb). */
      memoryMb: number
      reflection?: { output: unknown }
    }
  | { op: 'check'; code: string; asIs?: boolean }

export interface PythonTask extends PoolTask {
  kind: 'python'
  files: PythonFiles
  work: PythonOp
}

let engine: Promise<PythonEngine> | undefined

export async function runPythonTask(task: PythonTask, host: HostCaller | undefined): Promise<TaskResult> {
  engine ??= PythonEngine.start(task.files).catch((e: unknown) => {
    engine = undefined // a start that failed is tried again by the next task
    throw e
  })
  const e = await engine
  await e.ready()
  host?.notify('ready')
  await host?.drain()
  const w = task.work
  if (w.op === 'check') return { value: (await e.check(w.code, w.asIs)) ?? null }
  return { value: await e.run(w.code, w.state, w.variables, w.workspace, w.memoryMb, w.reflection) }
}
