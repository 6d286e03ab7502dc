/**
 * `lua.run`: what a `run:` node in Lua becomes when the agent loads (src/agent/tea-nodes.ts lowers
 * `language: lua`, `run: {type: lua, code}` and a `-- lua` first line onto it). It runs on a pool worker with a
 * time limit (src/pool/engine-call.ts).
 */

import * as v from 'valibot'
import { defineAction } from '../actions/types.ts'
import { TeaError } from '../core/errors.ts'
import { callEngine } from '../pool/engine-call.ts'
import { runtimeFiles } from '../sea/runtime-files.ts'
import type { LuaOutcome } from './engine.ts'
import type { LuaOp, LuaTask } from './task.ts'

function task(work: LuaOp): LuaTask {
  const [loader, wasm] = runtimeFiles('lua', ['index.cjs', 'glue.wasm'], 'wasmoon/dist/glue.wasm')
  return { kind: 'lua', files: { loader: loader!, wasm: wasm! }, work }
}

export const luaRun = defineAction({
  name: 'lua.run',
  runsCode: true,
  description:
    "Runs Lua 5.4 code with TEA's contract: the body of a function given `state`; the table it returns is merged into the state (another value becomes {result = value}). No os, io, require, package, loadfile, dofile, debug or string.dump; load reads text only.",
  params: v.object({
    code: v.pipe(v.string(), v.description('The Lua code (as written: not a template).')),
    timeout: v.optional(
      v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.description('Seconds the code may run (default settings.run_timeout).')),
    ),
  }),
  raw: ['code'],
  async verify(params, ctx) {
    if (typeof params.code !== 'string') return []
    const call = { signal: ctx.signal, timeoutMs: 30_000, where: {}, what: 'reading the Lua code' }
    const found = (await callEngine(task({ op: 'check', code: params.code }), call)) as { line?: number; message: string } | null
    return found ? [`Lua${found.line ? `, line ${found.line}` : ''}: ${found.message}`] : []
  },
  async run(p, ctx) {
    const where = { node: ctx.node, field: 'run' }
    // Code reaches the engine only where the agent allows code, wherever it came from (a template, the state).
    if (!ctx.settings.allow_inline_code) {
      throw new TeaError('INLINE_CODE_FORBIDDEN', 'lua.run runs Lua code, which settings.allow_inline_code: false forbids', {
        where: { node: ctx.node },
        hint: "remove allow_inline_code: false from the agent's settings to let it run Lua",
      })
    }
    const timeoutMs = (p.timeout ?? ctx.settings.run_timeout) * 1000
    const memoryMb = ctx.settings.run_memory_mb
    const outcome = (await callEngine(task({ op: 'run', code: p.code, state: ctx.state, memoryMb }), {
      signal: ctx.signal,
      timeoutMs,
      where,
      what: 'the Lua code',
    })) as LuaOutcome
    if (outcome.kind === 'memory') {
      throw new TeaError('NODE_MEMORY_LIMIT', `the Lua code went over its memory limit of ${memoryMb} MiB and was stopped`, {
        where,
        hint: `a table or string that keeps growing: raise settings.run_memory_mb (MiB, now ${memoryMb}) if the code needs more`,
      })
    }
    if (outcome.kind === 'error') {
      throw new TeaError('CODE_ERROR', `Lua${outcome.line ? `, line ${outcome.line}` : ''}: ${outcome.message}`, {
        where,
        details: { language: 'lua', ...(outcome.line && { line: outcome.line }) },
      })
    }
    return outcome.update
  },
})

/** TEA's `lua.eval` (its WebAssembly runtime's action): the same code with the same contract. */
export const luaEval = defineAction({
  ...luaRun,
  name: 'lua.eval',
  runsCode: true,
  description: "TEA's name for lua.run: runs Lua code given `state`; a returned table is the update, another value {result = value}.",
})
