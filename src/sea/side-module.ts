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

import vm from 'node:vm'
import { monotonicMs } from '../core/util.ts'
import {
  TRACE_ENV,
  atCleanExit,
  cachingOff,
  codeCacheFile,
  isPoolWorker,
  keepCodeCache,
  print,
  readCodeCache,
  release,
} from './code-cache.ts'

/**
 * The exports of side module `name` (CommonJS text, `hash` the build's hash of it). Its cache's folder is
 * `side-<name>-<hash>`, so that a build with other text never meets it.
 */
export function sideModule(name: string, hash: string, text: string): unknown {
  const trace = process.env[TRACE_ENV] === '1'
  const started = trace ? monotonicMs() : 0
  const file = cachingOff() ? undefined : codeCacheFile(`side-${name}-${hash}`)
  const cache = file ? readCodeCache(file) : undefined
  const script = new vm.Script(`(function (exports, module) {${text}\n})`, {
    filename: `${name} (carried by tea)`,
    ...(cache ? { cachedData: cache.data } : {}),
  })
  const module = { exports: {} as unknown }
  ;(script.runInThisContext() as (e: unknown, m: typeof module) => void)(module.exports, module)
  const used = cache !== undefined && !script.cachedDataRejected
  if (cache?.owned) release(cache.data)
  if (file && !used && !isPoolWorker())
    atCleanExit(() => keepCodeCache(file, script.createCachedData(), (folder) => folder.startsWith(`side-${name}-`)))
  if (trace) {
    const state = cache ? (used ? 'used' : 'rejected') : file ? 'absent' : 'off under coverage'
    print(2, `tea: side module ${name} compiled and run in ${(monotonicMs() - started).toFixed(1)} ms (code cache ${state})\n`)
  }
  return module.exports
}
