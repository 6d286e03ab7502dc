/**
 * The Python feature (build flag `python`; docs/agents.md, "run: in Python"): CPython in WebAssembly (Pyodide) with
 * its standard library, for `run:` code in Python. Only src/feature-list.ts imports this (its entry there, behind
 * the build flag), so a build without it carries neither the code nor the interpreter; an agent without Python code
 * never starts it.
 */

import type { Action } from '../actions/types.ts'
import type { TaskHandler } from '../pool/protocol.ts'
import { pythonRun } from './actions.ts'
import { codeExecute } from './code-execute.ts'
import { runPythonTask, type PythonTask } from './task.ts'

export function actions(): Action[] {
  // TEA's code.execute runs its code as python.run does, so it comes and goes with the interpreter.
  return [pythonRun, codeExecute] as Action[]
}

export const taskHandlers: Readonly<Record<string, TaskHandler>> = {
  python: (task: PythonTask, host) => runPythonTask(task, host),
}
