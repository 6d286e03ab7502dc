/**
 * node-llama-cpp as a build carries it (scripts/build/llama.mjs): its JavaScript (`llama.cjs`, only what tea uses)
 * and the prebuilt llama.cpp addon of the target's arch (`llama-addon.node` and the libllama/libggml libraries it
 * loads from its own folder), all in one folder. The bundle replaces every `import('node-llama-cpp')` with this
 * module's `llamaModule()` (scripts/build/plugins.mjs, `llamaPlugin`), and the GGUF provider reaches it only when a
 * `gguf:` model is first used, so a start that uses none neither reads nor extracts any of it.
 *
 * Where the folder is: beside a plain bundle, `llama/`; inside a single executable, the SEA assets `llama/<file>`
 * written once into the cache dir (`<cache>/llama/<hash>/`, named by the files' hashes, each checked by its size
 * against what the build recorded: src/sea/runtime-files.ts). `llama.cjs` then finds the addon beside itself.
 */
import { builtin } from '../core/builtin.ts'
import { TeaError, errorMessage, isTeaError } from '../core/errors.ts'
import { runtimeFiles } from './runtime-files.ts'

/** The files of `llama/`, `llama.cjs` first (the build defines the list for a target with the llama feature). */
function files(): readonly string[] {
  return typeof __TEA_LLAMA_FILES__ === 'undefined' ? [] : __TEA_LLAMA_FILES__
}

let loaded: unknown

/** node-llama-cpp's exports (those tea imports), from the files this build carries; loaded once. */
export function llamaModule(): unknown {
  if (loaded !== undefined) return loaded
  const names = files()
  if (names.length === 0) {
    throw new TeaError('CODE_ERROR', 'this tea build carries no llama.cpp runtime', {
      hint: 'use a tea build with the llama feature (linux-x64 or linux-arm64), or run tea from source',
    })
  }
  const paths = runtimeFiles('llama', names, 'node-llama-cpp')
  const js = paths[0]!
  try {
    loaded = builtin('node:module').createRequire(js)(js)
  } catch (e) {
    if (isTeaError(e)) throw e
    throw new TeaError('NATIVE_LOAD_FAILED', `cannot load node-llama-cpp from ${js}: ${errorMessage(e)}`, { cause: e })
  }
  return loaded
}
