/**
 * Where compiled code is kept between starts: V8 code caches under the cache dir's `code` folder, one folder per
 * compiled text and one file per Node version, arch and set of V8 flags (V8 rejects a cache made under any other).
 * The bundle's loader keeps the program's cache here (a plain bundle; an executable carries its own), and side
 * modules theirs (side-module.ts); both read, write, prune, free and trace them through this module. Nothing heavy
 * is imported here: the loader uses it before the program has loaded.
 */

import { readFileSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { keepNewest, writeKept } from '../core/cache-files.ts'
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

/**
 * A cache file's bytes, and whether their buffer is theirs alone (`release` may free it): a file under 4 KB, a
 * cache cut short, is read into a slice of Node's shared pool, which must never be freed. Undefined when unreadable.
 */
export function readCodeCache(file: string): { data: Buffer; owned: boolean } | undefined {
  try {
    const data = readFileSync(file)
    return { data, owned: data.byteLength === data.buffer.byteLength }
  } catch {
    return undefined
  }
}

/** Caches of this many builds of one text are kept; older ones go when a new one is written. */
const KEEP_BUILDS = 4

/** Writes a cache file; then only the newest KEEP_BUILDS folders beside its own that `ours` names are kept. */
export function keepCodeCache(file: string, bytes: Uint8Array, ours: (folder: string) => boolean): void {
  writeKept(file, bytes, () => keepNewest(dirname(dirname(file)), KEEP_BUILDS, ours))
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

/** Inside one of the pool's (tinypool's) worker threads, which leave V8's flags and writing caches to the main one. */
export function isPoolWorker(): boolean {
  return (process as { __tinypool_state__?: { isTinypoolWorker?: boolean } }).__tinypool_state__?.isTinypoolWorker === true
}

/** Straight to the descriptor, as the CLI writes (src/cli/io.ts): creating process.stdout costs ~3–5 ms. */
export function print(fd: 1 | 2, text: string): void {
  try {
    writeSync(fd, text)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EAGAIN') (fd === 1 ? process.stdout : process.stderr).write(text)
    // EPIPE: nobody is reading
  }
}
