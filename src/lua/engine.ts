/**
 * Lua 5.4 (the reference interpreter compiled to WebAssembly by the wasmoon package), started once per pool worker
 * that needs it (task.ts), never on the main thread: a runaway loop costs its worker, which the pool terminates
 * at the time limit. The contract is Lua (glue.ts); values cross as JSON text.
 */

import { createRequire } from 'node:module'
import { DEFAULT_RUN_MEMORY_MB } from '../actions/types.ts'
import { GLUE } from './glue.ts'

interface LuaGlobal {
  get(name: string): unknown
  getMemoryUsed(): number
  setMemoryMax(max: number | undefined): void
}
interface WasmoonEngine {
  doStringSync(code: string): unknown
  global: LuaGlobal
}
interface WasmoonFactory {
  createEngine(options: Record<string, unknown>): Promise<WasmoonEngine>
}

export interface LuaFiles {
  loader: string
  wasm: string
}

/** `memory`: the code went over its memory limit (settings.run_memory_mb). */
export type LuaOutcome =
  | { kind: 'done'; update: Record<string, unknown> }
  | { kind: 'error'; line?: number; message: string }
  | { kind: 'memory' }

/** The message Lua gives when its allocator refuses (LUA_ERRMEM): here, when a run reaches its memory limit. */
const OUT_OF_MEMORY = 'not enough memory'

export class LuaEngine {
  private constructor(
    private readonly global: LuaGlobal,
    private readonly run_: (code: string, state: string) => string,
    private readonly check_: (code: string) => string | undefined,
  ) {}

  static async start(files: LuaFiles): Promise<LuaEngine> {
    const { LuaFactory } = createRequire(files.loader)(files.loader) as { LuaFactory: new (wasm: string) => WasmoonFactory }
    // traceAllocations routes every allocation through wasmoon's counting allocator, which refuses past the max
    // set per run: the memory limit. It costs a call into JavaScript per allocation (bench: docs/lua-engines.md).
    const lua = await new LuaFactory(files.wasm).createEngine({
      injectObjects: false,
      enableProxy: false,
      openStandardLibs: true,
      traceAllocations: true,
    })
    lua.doStringSync(GLUE)
    const run = lua.global.get('tea_run') as (code: string, state: string) => string
    const check = lua.global.get('tea_check') as (code: string) => string | undefined
    return new LuaEngine(lua.global, run, check)
  }

  /**
   * Runs `run:` code against `state` (TEA's contract: `state` in, a table out). Lua may allocate `memoryMb` more
   * than the engine holds before the run (the state's tables count); past it the allocator refuses and Lua raises
   * its memory error, which the glue's pcall catches like any other, so the engine stays usable.
   */
  run(code: string, state: unknown, memoryMb = DEFAULT_RUN_MEMORY_MB): LuaOutcome {
    this.global.setMemoryMax(this.global.getMemoryUsed() + memoryMb * 1024 * 1024)
    let text: string
    try {
      text = this.run_(code, JSON.stringify(state ?? {}))
    } finally {
      this.global.setMemoryMax(undefined)
    }
    const out = JSON.parse(text) as { ok?: Record<string, unknown>; error?: string }
    if (out.ok) return { kind: 'done', update: out.ok }
    if (out.error === OUT_OF_MEMORY) return { kind: 'memory' }
    return { kind: 'error', ...placed(out.error ?? 'failed without a message') }
  }

  /** Compiles `code` without running it: undefined, or the syntax error. */
  check(code: string): { line?: number; message: string } | undefined {
    const err = this.check_(code)
    return err ? placed(err) : undefined
  }
}

/** `run:3: message` → line 3 and the message (Lua puts the chunk's name and line in front). */
function placed(error: string): { line?: number; message: string } {
  const m = /^run:(\d+): ([\s\S]*)$/.exec(error)
  return m ? { line: Number(m[1]), message: m[2]! } : { message: error }
}
