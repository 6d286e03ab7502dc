/**
 * Lua 5.4 (the reference interpreter compiled to WebAssembly by the wasmoon package), started once per pool worker
 * that needs it (task.ts), never on the main thread: a runaway loop costs its worker, which the pool terminates
 * at the time limit. The contract is Lua (glue.ts); values cross as JSON text.
 */

import { createRequire } from 'node:module'
import { GLUE } from './glue.ts'

interface LuaGlobal {
  get(name: string): unknown
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

export type LuaOutcome = { kind: 'done'; update: Record<string, unknown> } | { kind: 'error'; line?: number; message: string }

export class LuaEngine {
  private constructor(
    private readonly run_: (code: string, state: string) => string,
    private readonly check_: (code: string) => string | undefined,
  ) {}

  static async start(files: LuaFiles): Promise<LuaEngine> {
    const { LuaFactory } = createRequire(files.loader)(files.loader) as { LuaFactory: new (wasm: string) => WasmoonFactory }
    const lua = await new LuaFactory(files.wasm).createEngine({ injectObjects: false, enableProxy: false, openStandardLibs: true })
    lua.doStringSync(GLUE)
    const run = lua.global.get('tea_run') as (code: string, state: string) => string
    const check = lua.global.get('tea_check') as (code: string) => string | undefined
    return new LuaEngine(run, check)
  }

  /** Runs `run:` code against `state` (TEA's contract: `state` in, a table out). */
  run(code: string, state: unknown): LuaOutcome {
    const out = JSON.parse(this.run_(code, JSON.stringify(state ?? {}))) as { ok?: Record<string, unknown>; error?: string }
    if (out.ok) return { kind: 'done', update: out.ok }
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
