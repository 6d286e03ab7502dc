/**
 * SWI-Prolog's Emscripten loader (swipl-web.js), evaluated from its file with four places in its text replaced
 * before it runs. The loader is the only JavaScript the engine can reach, and in swipl-wasm it reaches all of it:
 * `js_run_script/1` (and `js_script/2`) end in `emscripten_run_script`, an `eval` of any text; `:=/2`, `js_call`,
 * `fetch/3` and `await/2` end in `prolog_js_call`, which walks from `globalThis` to any object and calls it. The
 * sandbox in glue.ts refuses every predicate that leads there, so these replacements are the second wall: were a
 * goal to slip past the sandbox, the bridge it reached would do nothing. Also replaced: `halt/0` setting the
 * process's exit code, and the heap's growth, which stops at `Module.teaHeapCap` bytes (engine.ts sets it per
 * run: settings.run_memory_mb) and records that it stopped there, so a run that hit it is told apart from one
 * that failed for another reason.
 *
 * Each text must occur exactly once. A swipl-wasm whose loader differs makes the engine refuse to start (the
 * walls would be missing, silently) until these are checked against it again.
 */

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import vm from 'node:vm'
import { TeaError } from '../core/errors.ts'

/** What the loader's module object carries for tea: the heap cap and whether a run met it. */
export interface HeapGuard {
  teaHeapCap: number
  teaHeapRefused: boolean
}

const PATCHES: ReadonlyArray<readonly [what: string, from: string, to: string]> = [
  ['js_run_script/1', '_emscripten_run_script=ptr=>{eval(UTF8ToString(ptr))}', '_emscripten_run_script=ptr=>{}'],
  ['js_call and :=/2', '($0,$1)=>prolog_js_call($0,$1)', '($0,$1)=>0'],
  ['halt/0', 'quit_=(status,toThrow)=>{process.exitCode=status;throw toThrow}', 'quit_=(status,toThrow)=>{throw toThrow}'],
  [
    'the heap limit',
    'requestedSize>>>=0;',
    'requestedSize>>>=0;if(requestedSize>Module.teaHeapCap){Module.teaHeapRefused=true;return false}',
  ],
]

type SwiplFactory = (options: Record<string, unknown>) => Promise<unknown>

/** The Emscripten loader is CommonJS that reads `__dirname`; it is evaluated from its file, wherever that is. */
export function loadFactory(glue: string): SwiplFactory {
  const module = { exports: {} as unknown }
  const fn = vm.compileFunction(
    closeBridges(readFileSync(glue, 'utf8'), glue),
    ['module', 'exports', 'require', '__dirname', '__filename'],
    {
      filename: glue,
    },
  )
  fn(module, module.exports, createRequire(glue), glue.slice(0, glue.lastIndexOf('/')), glue)
  return module.exports as SwiplFactory
}

export function closeBridges(source: string, file: string): string {
  let out = source
  for (const [what, from, to] of PATCHES) {
    const at = out.indexOf(from)
    if (at < 0 || out.indexOf(from, at + 1) >= 0) {
      throw new TeaError('INTERNAL', `the Prolog engine's loader (${file}) is not the one tea knows: cannot close ${what}`, {
        hint: 'this swipl-wasm version is not supported: install the version in package.json (npm ci), or rebuild tea',
      })
    }
    out = out.slice(0, at) + to + out.slice(at + from.length)
  }
  return out
}
