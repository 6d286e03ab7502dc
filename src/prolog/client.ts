/**
 * The main thread's side: every Prolog operation goes to a pool worker (task.ts) through the engine pool
 * (src/pool/engine-call.ts), never runs here.
 */

import { callEngine, type EngineCall } from '../pool/engine-call.ts'
import type { QueryOutcome, RunOutcome } from './engine.ts'
import { prologFiles } from './files.ts'
import type { PrologOp, PrologTask } from './task.ts'

export function runProlog(work: Extract<PrologOp, { op: 'run' }>, call: EngineCall): Promise<RunOutcome> {
  return onEngine(work, call) as Promise<RunOutcome>
}

export function checkProlog(work: Extract<PrologOp, { op: 'check' }>, call: EngineCall): Promise<{ line: number; message: string } | null> {
  return onEngine(work, call) as Promise<{ line: number; message: string } | null>
}

export function queryProlog(work: Extract<PrologOp, { op: 'query' }>, call: EngineCall): Promise<QueryOutcome> {
  return onEngine(work, call) as Promise<QueryOutcome>
}

function onEngine(work: PrologOp, call: EngineCall): Promise<unknown> {
  const task: PrologTask = { kind: 'prolog', files: prologFiles(), work, where: call.where }
  return callEngine(task, call)
}
