/**
 * The Lua feature (build flag `lua`; docs/agents.md, "run: in Lua"): Lua 5.4 in WebAssembly for `run:` code in Lua.
 * Only src/features.ts imports this, behind the FEATURE_LUA flag, so a build without it carries neither the code
 * nor the engine.
 */

import type { Action } from '../actions/types.ts'
import type { TaskHandler } from '../pool/protocol.ts'
import { luaEval, luaRun } from './actions.ts'
import { runLuaTask, type LuaTask } from './task.ts'

export function luaActions(): Action[] {
  return [luaRun, luaEval] as Action[]
}

export const luaTaskHandlers: Readonly<Record<string, TaskHandler>> = {
  lua: (task: LuaTask, host) => runLuaTask(task, host),
}
