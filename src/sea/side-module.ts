/**
 * A package the program carries as text and compiles at its first use as a script of its own, with a V8 code cache
 * of its own in the cache dir (issue 14). V8 deserialises the whole of the program's code cache at every start
 * (~3.2 µs per KB on x64), so what only some starts run costs the others: the yaml package, which a start from a
 * kept parse (src/agent/parse-cache.ts) never runs, was 175 of the executables' 915 KB. A side module's first use
 * on a machine compiles it from source and writes its cache when the process ends cleanly; later uses compile it
 * from that cache. Any command may write it (the loader writes the program's cache only after `run`, `resume` and
 * `worker`, whose functions every start needs): a side module is the same package whichever command loads it. The
 * build makes the text and its hash (scripts/build/plugins.mjs, `sideText`).
 */

import { readFileSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import vm from 'node:vm'
import { keepNewest, writeKept } from '../core/cache-files.ts'
import { builtin } from '../core/builtin.ts'
import { TRACE_ENV, atCleanExit, cachingOff, codeCacheFile, release } from './code-cache.ts'

/** Builds of one side module whose caches are kept (as the program's code cache keeps its builds). */
const KEEP = 4

/**
 * The exports of side module `name` (CommonJS text, `hash` the build's hash of it). Its cache's folder is
 * `side-<name>-<hash>`, so that a build with other text never meets it.
 */
export function sideModule(name: string, hash: string, text: string): unknown {
  // Only under the trace: reading the `performance` global loads Node's perf_hooks modules.
  const trace = process.env[TRACE_ENV] === '1'
  const started = trace ? performance.now() : 0
  const folder = `side-${name}-${hash}`
  const file = cachingOff() ? undefined : codeCacheFile(folder)
  let cachedData: Buffer | undefined
  try {
    if (file) cachedData = readFileSync(file)
  } catch {
    // none yet: compiled from source, and kept at exit
  }
  const script = new vm.Script(`(function (exports, module) {${text}\n})`, {
    filename: `${name} (carried by tea)`,
    ...(cachedData ? { cachedData } : {}),
  })
  const module = { exports: {} as unknown }
  ;(script.runInThisContext() as (e: unknown, m: typeof module) => void)(module.exports, module)
  const used = cachedData !== undefined && !script.cachedDataRejected
  // Only a buffer of its own: a file under 4 KB (a cache cut short) is read into Node's shared pool.
  if (cachedData && cachedData.byteLength === cachedData.buffer.byteLength) release(cachedData)
  if (file && !used && builtin('node:worker_threads').isMainThread) {
    const codeDir = dirname(dirname(file))
    atCleanExit(() => writeKept(file, script.createCachedData(), () => keepNewest(codeDir, KEEP, (n) => n.startsWith(`side-${name}-`))))
  }
  if (trace) {
    const state = cachedData ? (used ? 'used' : 'rejected') : file ? 'absent' : 'off under coverage'
    // Straight to the descriptor, as the loader prints: creating process.stderr costs a start milliseconds.
    writeSync(2, `tea: side module ${name} compiled and run in ${(performance.now() - started).toFixed(1)} ms (code cache ${state})\n`)
  }
  return module.exports
}
