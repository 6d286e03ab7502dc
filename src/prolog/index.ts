/**
 * The Prolog feature (build flag `prolog`; docs/agents.md, "run: in other languages"): SWI-Prolog in WebAssembly
 * for `run:` code in Prolog and for `prolog.query` (validate.extraction's constraints). Only src/feature-list.ts
 * imports this (its entry there, behind the build flag), so a build without it carries neither the code nor the
 * engine.
 */

import type { Action } from '../actions/types.ts'
import type { TaskHandler } from '../pool/protocol.ts'
import { prologQuery, prologRun } from './actions.ts'
import { runPrologTask, type PrologTask } from './task.ts'

export function actions(): Action[] {
  return [prologRun, prologQuery] as Action[]
}

export const taskHandlers: Readonly<Record<string, TaskHandler>> = {
  prolog: (task: PrologTask, host) => runPrologTask(task, host),
}
