/**
 * The worker side of the Python feature: a pool task of kind `python` runs on this worker thread's Python engine,
 * started by the first task and kept (src/pool/engine-call.ts tells how the limit and the worker's end work). The
 * engine hands each run an interpreter of its own (engine.ts), so "ready" is told only once that one has started:
 * the code's time limit does not pay for an interpreter still restoring.
 */

import { engineTask } from '../pool/engine-call.ts'
import type { PoolTask } from '../pool/protocol.ts'
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

export const runPythonTask = engineTask(
  (files: PythonFiles) => PythonEngine.start(files),
  async (e, w: PythonOp) =>
    w.op === 'check'
      ? ((await e.check(w.code, w.asIs)) ?? null)
      : e.run(w.code, w.state, w.variables, w.workspace, w.memoryMb, w.reflection),
  { prepare: (e) => e.ready() },
)
