/**
 * The worker side of the Prolog feature: a pool task of kind `prolog` runs one operation on this worker thread's
 * engine, started on the first task and kept for the next ones (the pool keeps an idle worker for a minute). A
 * task that outlives its time limit has its worker terminated by the pool, engine and all; the next task starts
 * a fresh one. The task tells the main thread when the engine is ready (`ready`), because the time limit is the
 * code's: starting the engine (seconds on a small board) does not count against it.
 */

import { engineOnWorker } from '../pool/engine-call.ts'
import type { HostCaller, PoolTask, TaskResult } from '../pool/protocol.ts'
import { PrologEngine } from './engine.ts'
import type { PrologFiles } from './files.ts'

export type PrologOp =
  | { op: 'run'; code: string; state: unknown }
  | { op: 'check'; code: string }
  | { op: 'query'; program: string; facts: unknown[][]; goal: string; max: number }

export interface PrologTask extends PoolTask {
  kind: 'prolog'
  files: PrologFiles
  work: PrologOp
}

const engine = engineOnWorker((files: PrologFiles) => PrologEngine.start(files))

export async function runPrologTask(task: PrologTask, host: HostCaller | undefined): Promise<TaskResult> {
  const e = await engine(task.files, host)
  const w = task.work
  if (w.op === 'run') return { value: e.run(w.code, w.state) }
  if (w.op === 'check') return { value: e.check(w.code) ?? null }
  return { value: e.query(w.program, w.facts, w.goal, w.max) }
}
