/**
 * Files an optional feature reads at run time — a language engine's WebAssembly and loader — found on the main
 * thread and handed to the worker that starts the engine:
 *   1. inside a single executable, in the SEA asset `<feature>.pack` (sea-api.ts, `carriedBytes`), or on Node 20.11
 *      as bytes inside the bundle, written once to the cache dir, because a worker reads files, not the executable's
 *      assets;
 *   2. beside a plain bundle, in `<feature>/` (build.mjs copies them there for targets with the feature);
 *   3. from source, in the npm package that ships them.
 * Nothing is downloaded, ever: a build without the files fails with a clear error.
 */

import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { cacheDir } from './cache-dir.ts'
import { EMBEDDED } from './embedded.ts'
import { materialise, materialised } from './materialise.ts'
import { carriedBytes, carriedFile } from './sea-api.ts'

const found = new Map<string, string[]>()

/**
 * The paths of `names`, in order. `packageFile` is one of them as the package exports it (e.g.
 * `wasmoon/dist/glue.wasm`): from source, every name is looked up in its folder. A `.cjs` name is the package's
 * `.js` loader: a build carries it as `.cjs` so that it loads as CommonJS wherever the build is put (beside a
 * `package.json` that says `"type": "module"`, a `.js` file would load as an ES module).
 */
export function runtimeFiles(feature: string, names: readonly string[], packageFile: string): string[] {
  const key = `${feature}\u0000${names.join('\u0000')}`
  let paths = found.get(key)
  if (!paths) {
    paths = bundledPaths(feature, names) ?? names.map((f) => join(packageDir(packageFile), f.replace(/\.cjs$/, '.js')))
    const missing = paths.filter((p) => !existsSync(p))
    if (missing.length) {
      throw new TeaError('CODE_ERROR', `the ${feature} engine's files are missing: ${missing.join(', ')}`, {
        hint: 'this tea build is incomplete: rebuild it (node build.mjs), or run `npm install` from source',
      })
    }
    found.set(key, paths)
  }
  return paths
}

function bundledPaths(feature: string, names: readonly string[]): string[] | undefined {
  if (typeof __TEA_TARGET__ === 'undefined') return undefined
  const keys = names.map((f) => `${feature}/${f}`)
  const known = keys.map((k) => carriedFile(k))
  if (known.every((k) => k !== undefined)) {
    // The build recorded each file's hash: the folder is named by them, and only files missing from it are read
    // (Python's are ~30 MB, which used to be read and hashed at every engine start).
    const folder = createHash('sha256')
      .update(known.map((k) => k.hash).join(' '))
      .digest('hex')
      .slice(0, 16)
    return names.map((f, i) => {
      const earlier = materialised(feature, f, known[i], cacheDir(), folder)
      if (earlier) return earlier
      const bytes = carriedBytes(keys[i]!) ?? embedded(keys[i]!)
      return bytes ? materialise(feature, f, bytes, cacheDir(), folder) : join(cacheDir(), feature, folder, f)
    })
  }
  const carried = keys.map((k) => carriedBytes(k) ?? embedded(k))
  if (carried.every((b) => b !== undefined)) {
    // One folder for all of them: an engine may look for its files beside each other (Pyodide does).
    const hash = createHash('sha256')
    for (const b of carried) hash.update(b!)
    const folder = hash.digest('hex').slice(0, 16)
    return names.map((f, i) => materialise(feature, f, carried[i]!, cacheDir(), folder))
  }
  const dir = join(dirname(typeof __filename === 'string' ? __filename : process.execPath), feature)
  return names.map((f) => join(dir, f))
}

function embedded(name: string): Uint8Array | undefined {
  const text = EMBEDDED?.files?.[name]
  return text === undefined ? undefined : Buffer.from(text, 'base64')
}

function packageDir(packageFile: string): string {
  // From source: resolved from this file, named by its own stack frame (`import.meta` would make esbuild warn in
  // every CJS build; see src/pool/worker-location.ts).
  const here =
    typeof __filename === 'string' && __filename !== '' ? __filename : /(\/[^\s():]*\/runtime-files\.ts)/.exec(new Error().stack ?? '')?.[1]
  return dirname(createRequire(here ?? join(process.cwd(), 'package.json')).resolve(packageFile))
}
