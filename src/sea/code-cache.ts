/**
 * Where compiled code is kept between starts: V8 code caches under the cache dir's `code` folder, one folder per
 * compiled text and one file per Node version, arch and set of V8 flags (V8 rejects a cache made under any other).
 * The bundle's loader keeps the program's cache here (a plain bundle; an executable carries its own), and side
 * modules theirs (side-module.ts). Nothing heavy is imported here: the loader uses it before the program has loaded.
 */

import { join } from 'node:path'
import { builtin } from '../core/builtin.ts'
import { cacheDir } from './cache-dir.ts'

/** Set to 1 to have the loader and side modules say on stderr whether their code cache was used (tests, diagnosis). */
export const TRACE_ENV = 'TEA_TRACE_LOADER'

/** The cache file for the text whose folder is `folder`, for this Node, arch and set of flags. */
export function codeCacheFile(folder: string): string {
  return join(cacheDir(), 'code', folder, `${process.version}-${process.arch}-${flagsKey()}.cache`)
}

/** V8 rejects a cache made under other V8 flags; one file per set of flags keeps two kinds of callers apart. */
function flagsKey(): string {
  const text = `${process.execArgv.join(' ')}|${process.env.NODE_OPTIONS ?? ''}`
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16).padStart(8, '0')
}

/** Coverage makes V8 compile differently: a cache made under it would not serve a plain run. */
export function cachingOff(): boolean {
  return Boolean(process.env.NODE_V8_COVERAGE)
}

/**
 * Calls `write` when the process ends cleanly, unless V8's flags changed since now: V8 stamps a cache with its
 * flags, and one made after they changed would be rejected by the next start. (node:v8 is required here, not
 * imported: it costs a start ~0.7 ms, and only a start that writes needs it.)
 */
export function atCleanExit(write: () => void): void {
  const { cachedDataVersionTag } = builtin('node:v8')
  const tag = cachedDataVersionTag()
  process.once('exit', (code) => {
    if (code === 0 && cachedDataVersionTag() === tag) write()
  })
}

/**
 * Gives a buffer's memory back now instead of at the next garbage collection, which a short run never reaches: V8
 * has copied what it needs from the code cache once the script is compiled, and the ~1 MB buffer would otherwise
 * stay resident to the end of the run (issue 14). `transfer(0)` detaches the buffer and frees its memory; Node 20
 * lacks it and keeps the buffer until a collection, as before.
 */
export function release(data: Uint8Array): boolean {
  const buffer = data.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer }
  if (!buffer.transfer) return false
  try {
    buffer.transfer(0)
    return true
  } catch {
    return false // not detachable (Node's pool is not): it waits for a collection, as on Node 20
  }
}
