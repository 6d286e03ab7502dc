/**
 * The worker side of the Python feature: a pool task of kind `python` runs on this worker thread's interpreter,
 * started on the first task and kept (src/pool/engine-call.ts tells how the limit and the worker's end work).
 */

import { engineOnWorker } from '../pool/engine-call.ts'
import type { HostCaller, PoolTask, TaskResult } from '../pool/protocol.ts'
import { PythonEngine, type PythonFiles } from './engine.ts'

export type PythonOp =
  | { op: 'run'; code: string; state: unknown; variables: unknown; workspace?: string; reflection?: { output: unknown } }
  | { op: 'check'; code: string; asIs?: boolean }

export interface PythonTask extends PoolTask {
  kind: 'python'
  files: PythonFiles
  work: PythonOp
}

const engine = engineOnWorker((files: PythonFiles) => PythonEngine.start(files))

export async function runPythonTask(task: PythonTask, host: HostCaller | undefined): Promise<TaskResult> {
  const e = await engine(task.files, host)
  const w = task.work
  if (w.op === 'check') return { value: e.check(w.code, w.asIs) ?? null }
  return { value: e.run(w.code, w.state, w.variables, w.workspace, w.reflection) }
}
