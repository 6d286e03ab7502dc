/**
 * The Lua feature (build flag `lua`; docs/agents.md, "run: in Lua"): Lua 5.4 in WebAssembly for `run:` code in Lua.
 * Only src/feature-list.ts imports this (its entry there, behind the build flag), so a build without it carries
 * neither the code nor the engine.
 */

import type { Action } from '../actions/types.ts'
import type { TaskHandler } from '../pool/protocol.ts'
import { luaEval, luaRun } from './actions.ts'
import { runLuaTask, type LuaTask } from './task.ts'

export function actions(): Action[] {
  return [luaRun, luaEval] as Action[]
}

export const taskHandlers: Readonly<Record<string, TaskHandler>> = {
  lua: (task: LuaTask, host) => runLuaTask(task, host),
}
