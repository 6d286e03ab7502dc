/**
 * The worker side of the Lua feature: a pool task of kind `lua` runs on this worker thread's engine, started on the
 * first task and kept (src/pool/engine-call.ts tells how the limit and the worker's end work).
 */

import { engineOnWorker } from '../pool/engine-call.ts'
import type { HostCaller, PoolTask, TaskResult } from '../pool/protocol.ts'
import { LuaEngine, type LuaFiles } from './engine.ts'

/** `memoryMb`: the run's memory limit (settings.run_memory_mb). */
export type LuaOp = { op: 'run'; code: string; state: unknown; memoryMb: number } | { op: 'check'; code: string }

export interface LuaTask extends PoolTask {
  kind: 'lua'
  files: LuaFiles
  work: LuaOp
}

const engine = engineOnWorker((files: LuaFiles) => LuaEngine.start(files))

export async function runLuaTask(task: LuaTask, host: HostCaller | undefined): Promise<TaskResult> {
  const e = await engine(task.files, host)
  const w = task.work
  return { value: w.op === 'run' ? e.run(w.code, w.state, w.memoryMb) : (e.check(w.code) ?? null) }
}
