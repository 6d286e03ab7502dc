/**
 * The worker side of the Lua feature: a pool task of kind `lua` runs on this worker thread's engine, started on the
 * first task and kept (src/pool/engine-call.ts tells how the limit and the worker's end work).
 */

import { engineTask } from '../pool/engine-call.ts'
import type { PoolTask } from '../pool/protocol.ts'
import { LuaEngine, type LuaFiles } from './engine.ts'

/** `memoryMb`: the run's memory limit (settings.run_memory_mb). */
export type LuaOp = { op: 'run'; code: string; state: unknown; memoryMb: number } | { op: 'check'; code: string }

export interface LuaTask extends PoolTask {
  kind: 'lua'
  files: LuaFiles
  work: LuaOp
}

export const runLuaTask = engineTask(
  (files: LuaFiles) => LuaEngine.start(files),
  (e, w: LuaOp) => (w.op === 'run' ? e.run(w.code, w.state, w.memoryMb) : (e.check(w.code) ?? null)),
)
