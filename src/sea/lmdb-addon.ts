/**
 * Loads lmdb's native addon in a bundle or single executable. The bundle build replaces lmdb's own loader
 * (`node-gyp-build-optional-packages`, which reads package.json files and `require`s the `.node` — neither works
 * inside a SEA) with this. Where the addon comes from, first match wins:
 *   1. `TEA_LMDB_NATIVE` — an explicit path (also how worker threads reuse the main thread's choice);
 *   2. `lmdb.node` next to the executable (or next to the bundle file);
 *   3. the SEA asset `lmdb.node`, written once to the cache dir;
 *   4. bytes embedded in the bundle (Node 20.11 has no SEA assets), written once to the cache dir;
 *   5. the `@lmdb/lmdb-<platform>-<arch>` package in node_modules (a plain bundle inside a checkout or install).
 */
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { builtin } from '../core/builtin.ts'
import { TeaError, errorMessage, isTeaError } from '../core/errors.ts'
import { CACHE_HINT, cacheDir, isNoexec } from './cache-dir.ts'
import { materialise, materialised } from './materialise.ts'
import { EMBEDDED } from './embedded.ts'
import { type CarriedFile, carriedFile, seaApi, seaAsset } from './sea-api.ts'

export const LMDB_ENV = 'TEA_LMDB_NATIVE'

export interface AddonSource {
  path: string
  from: 'env' | 'beside' | 'sea-asset' | 'embedded' | 'node_modules'
}

export interface LocateContext {
  env: NodeJS.ProcessEnv
  /** Folders to look in for `lmdb.node` (the executable's, the bundle's). */
  besideDirs: string[]
  seaAddon: () => Uint8Array | undefined
  embeddedAddon: () => string | undefined
  /** What the build recorded about the addon the executable carries, if it did (sea-api.ts). */
  carried?: () => CarriedFile | undefined
  /** Files `require.resolve`-style lookups start from. */
  resolveFrom: string[]
  platform: string
  arch: string
  abi: string
  /** Where carried addons are written (src/sea/cache-dir.ts). */
  cacheRoot: string
}

export function defaultLocateContext(): LocateContext {
  const sea = seaApi()
  const inExecutable = sea !== undefined || EMBEDDED !== undefined
  // In a plain bundle `__filename` is the bundle file; from source (ESM) it does not exist.
  const bundleFile = !inExecutable && typeof __filename === 'string' ? __filename : undefined
  return {
    env: process.env,
    besideDirs: inExecutable ? [dirname(process.execPath)] : bundleFile ? [dirname(bundleFile)] : [],
    seaAddon: () => seaAsset('lmdb.node', sea),
    embeddedAddon: () => EMBEDDED?.lmdbNode,
    carried: () => (inExecutable ? carriedFile('lmdb.node', sea) : undefined),
    resolveFrom: [...(bundleFile ? [bundleFile] : []), join(process.cwd(), 'noop.js')],
    platform: process.platform,
    arch: process.arch,
    abi: process.versions.modules,
    cacheRoot: cacheDir(),
  }
}

export function locateLmdbAddon(ctx: LocateContext): AddonSource {
  const explicit = ctx.env[LMDB_ENV]
  if (explicit) {
    if (!existsSync(explicit)) {
      throw new TeaError('NATIVE_LOAD_FAILED', `${LMDB_ENV} names ${explicit}, which does not exist`, {
        hint: `point ${LMDB_ENV} at lmdb's .node file, or unset it`,
      })
    }
    return { path: explicit, from: 'env' }
  }
  for (const dir of ctx.besideDirs) {
    const file = join(dir, 'lmdb.node')
    if (existsSync(file)) return { path: file, from: 'beside' }
  }
  // A copy written by an earlier start is found by the hash the build recorded, without reading the carried bytes.
  const known = ctx.carried?.()
  const earlier = materialised('native', 'lmdb.node', known, ctx.cacheRoot)
  if (earlier) return { path: earlier, from: ctx.embeddedAddon() === undefined ? 'sea-asset' : 'embedded' }
  const asset = ctx.seaAddon()
  if (asset) return { path: materialise('native', 'lmdb.node', asset, ctx.cacheRoot, known?.hash), from: 'sea-asset' }
  const embedded = ctx.embeddedAddon()
  if (embedded)
    return { path: materialise('native', 'lmdb.node', Buffer.from(embedded, 'base64'), ctx.cacheRoot, known?.hash), from: 'embedded' }
  const pkg = `@lmdb/lmdb-${ctx.platform}-${ctx.arch === 'arm' ? 'arm' : ctx.arch}`
  const { createRequire } = builtin('node:module')
  for (const from of ctx.resolveFrom) {
    let dir: string
    try {
      dir = dirname(createRequire(from).resolve(`${pkg}/package.json`))
    } catch {
      continue
    }
    const file = pickPrebuild(readdirSync(dir), ctx.abi)
    if (file) return { path: join(dir, file), from: 'node_modules' }
  }
  throw new TeaError(
    'NATIVE_LOAD_FAILED',
    `lmdb's native addon was not found (looked at $${LMDB_ENV}, lmdb.node in ${ctx.besideDirs.join(', ') || 'no folder'}, and ${pkg} in node_modules)`,
    {
      hint: `use the single executable, put lmdb.node next to the bundle, or set ${LMDB_ENV}`,
    },
  )
}

/** The best prebuild in an `@lmdb/lmdb-*` package: one built for this ABI (faster V8 calls), else N-API; glibc only. */
export function pickPrebuild(files: string[], abi: string): string | undefined {
  const want = [`node.abi${abi}.glibc.node`, 'node.napi.glibc.node']
  return want.find((f) => files.includes(f))
}

export function loadLmdbAddon(ctx: LocateContext = defaultLocateContext()): unknown {
  const source = locateLmdbAddon(ctx)
  const mod = { exports: {} as unknown }
  try {
    process.dlopen(mod, source.path)
  } catch (e) {
    throw explainLoadFailure(e, source)
  }
  // Worker threads start with a copy of this env, so they load the same file without extracting it again.
  ctx.env[LMDB_ENV] = source.path
  return mod.exports
}

export function explainLoadFailure(e: unknown, source: AddonSource): TeaError {
  if (isTeaError(e)) return e
  const msg = errorMessage(e)
  const fromCache = source.from === 'sea-asset' || source.from === 'embedded'
  if (fromCache && (/failed to map segment/i.test(msg) || isNoexec(source.path))) {
    return new TeaError(
      'CACHE_DIR_UNUSABLE',
      `cannot load lmdb's native addon from ${source.path}: its filesystem is mounted noexec (${msg})`,
      {
        cause: e,
        hint: CACHE_HINT,
      },
    )
  }
  return new TeaError('NATIVE_LOAD_FAILED', `cannot load lmdb's native addon from ${source.path} (found via ${source.from}): ${msg}`, {
    cause: e,
    hint: 'the board needs glibc >= 2.34 and libstdc++6 (Raspberry Pi OS bookworm or newer); see docs/deploy.md',
  })
}
