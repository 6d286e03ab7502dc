/**
 * The worker side of the Prolog feature: a pool task of kind `prolog` runs one operation on this worker thread's
 * engine, started on the first task and kept for the next ones (the pool keeps an idle worker for a minute). A
 * task that outlives its time limit has its worker terminated by the pool, engine and all; the next task starts
 * a fresh one. The task tells the main thread when the engine is ready (`ready`), because the time limit is the
 * code's: starting the engine (seconds on a small board) does not count against it.
 */

import { engineTask } from '../pool/engine-call.ts'
import type { PoolTask } from '../pool/protocol.ts'
import { PrologEngine } from './engine.ts'
import type { PrologFiles } from './files.ts'

/** `memoryMb`: the run's memory limit (settings.run_memory_mb). */
export type PrologOp =
  | { op: 'run'; code: string; state: unknown; memoryMb: number }
  | { op: 'check'; code: string }
  | { op: 'query'; program: string; facts: unknown[][]; goal: string; max: number; memoryMb: number }

export interface PrologTask extends PoolTask {
  kind: 'prolog'
  files: PrologFiles
  work: PrologOp
}

export const runPrologTask = engineTask(
  (files: PrologFiles) => PrologEngine.start(files),
  (e, w: PrologOp) => {
    if (w.op === 'run') return e.run(w.code, w.state, w.memoryMb)
    if (w.op === 'check') return e.check(w.code) ?? null
    return e.query(w.program, w.facts, w.goal, w.max, w.memoryMb)
  },
  // An engine whose heap met a run's cap is dropped whole (engine.ts): the next task starts another.
  { spent: (e) => e.spent },
)
