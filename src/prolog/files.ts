/**
 * Where SWI-Prolog's three files are (the Emscripten loader `swipl-web.js`, the engine `swipl-web.wasm`, and
 * `swipl-web.data`, its library), found on the main thread and handed to the worker that starts the engine:
 *   1. inside a single executable, as SEA assets `prolog/<file>` (or, on Node 20.11, as bytes inside the bundle),
 *      written once to the cache dir, because a worker reads files, not the executable's assets;
 *   2. beside a plain bundle, in `prolog/` (build.mjs copies them there for targets with the feature);
 *   3. from source, in the swipl-wasm package.
 * Nothing is downloaded, ever: a build without the files fails with a clear error.
 */

import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { materialise } from '../sea/cache-dir.ts'
import { EMBEDDED } from '../sea/embedded.ts'
import { seaAsset } from '../sea/sea-api.ts'

export const PROLOG_FILES = ['swipl-web.js', 'swipl-web.wasm', 'swipl-web.data'] as const

export interface PrologFiles {
  glue: string
  wasm: string
  data: string
}

let found: PrologFiles | undefined

export function prologFiles(): PrologFiles {
  found ??= locate()
  return found
}

function locate(): PrologFiles {
  const paths = bundledPaths() ?? PROLOG_FILES.map((f) => join(packageDir(), f))
  const missing = paths.filter((p) => !existsSync(p))
  if (missing.length) {
    throw new TeaError('CODE_ERROR', `the Prolog engine's files are missing: ${missing.join(', ')}`, {
      hint: 'this tea build is incomplete: rebuild it (node build.mjs), or run `npm install` from source',
    })
  }
  return { glue: paths[0]!, wasm: paths[1]!, data: paths[2]! }
}

/** The files inside a built tea, or undefined from source. */
function bundledPaths(): string[] | undefined {
  if (typeof __TEA_TARGET__ === 'undefined') return undefined
  const carried = PROLOG_FILES.map((f) => seaAsset(`prolog/${f}`) ?? embedded(f))
  if (carried.every((b) => b !== undefined)) return PROLOG_FILES.map((f, i) => materialise('prolog', f, carried[i]!))
  const dir = join(dirname(typeof __filename === 'string' ? __filename : process.execPath), 'prolog')
  return PROLOG_FILES.map((f) => join(dir, f))
}

function embedded(file: string): Uint8Array | undefined {
  const text = EMBEDDED?.files?.[`prolog/${file}`]
  return text === undefined ? undefined : Buffer.from(text, 'base64')
}

function packageDir(): string {
  // From source: resolved from this file, named by its own stack frame (`import.meta` would make esbuild warn in
  // every CJS build; see src/pool/worker-location.ts).
  const here =
    typeof __filename === 'string' && __filename !== '' ? __filename : /(\/[^\s():]*\/files\.ts)/.exec(new Error().stack ?? '')?.[1]
  const require = createRequire(here ?? join(process.cwd(), 'package.json'))
  return dirname(require.resolve('swipl-wasm/dist/swipl/swipl-web.js'))
}
