/**
 * The bundle's loader: the few kilobytes at the top of `tea.cjs` that run before the program. A cold start used
 * to go mostly to V8 compiling the 700 KB program, once when the file loaded and then function by function as a
 * run reached them; the loader takes that out of the start (bench/RESULTS.md, issue 14):
 *   - `tea --version` (also `-V`, `version`) is answered here, from the build's defines, without the program;
 *   - everything else compiles the program with a V8 code cache made after a warm-up run, so the functions a run
 *     uses arrive compiled: inside a single executable the cache is an asset the build made with the target's own
 *     Node (scripts/build/sea-build.mjs); a plain bundle writes one into the cache dir after its first `run`,
 *     `resume` or `worker` (per Node version, arch and flags; V8 rejects a cache from another build, which then
 *     costs only the compile it would have cost anyway).
 *
 * The file's format (scripts/build/program.mjs writes it):
 *
 *     <this loader, minified CommonJS>
 *     /*tea:program
 *     <the program: the CLI and pool-worker bundle, minified CommonJS, each star-slash written star-\x01-slash>
 *     <star-slash>
 *
 * The program rides in a comment so that loading the file costs V8 a scan for the comment's end (~2 ms), not a
 * parse; the loader reads it back from its own file and compiles it with vm.Script, with line numbers that match
 * the file. An executable also carries the program as V8 compiles it (wrapped, escapes undone: `tea.program.js`,
 * written by this loader during the build's warm-up run), so that a start decodes it once from the asset instead
 * of building it in a buffer first (~1 ms and 1.1 MB of peak memory; issue 14). One file still serves both roles: inside a
 * tinypool worker the program exports the pool's handler instead of starting the CLI (build.mjs, `entrySource`).
 */

import { readFileSync, writeFileSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import vm from 'node:vm'
import { keepNewest, writeKept } from '../core/cache-files.ts'
import { PROGRAM_ID, isProgramId, versionLine } from '../core/build-info.ts'
import { cacheDir } from './cache-dir.ts'
import { type SeaApi, seaApi } from './sea-api.ts'

/** The line that opens the program's comment, and the escape for star-slash inside it. */
export const PROGRAM_MARK = '/*tea:program\n'
export const COMMENT_END_ESCAPED = '*\x01/'

/**
 * The SEA assets: the file itself (the workers load it too), the program as V8 compiles it, and the code cache made
 * with the target's Node.
 */
export const PROGRAM_ASSET = 'tea.cjs'
export const PROGRAM_SOURCE_ASSET = 'tea.program.js'
export const CODE_CACHE_ASSET = 'tea.cjs.cache'

/** Set by the build: where to write the code cache at exit (the run it follows is the warm-up). */
export const BUILD_CACHE_ENV = 'TEA_BUILD_CODE_CACHE'
/** Set by the build: where to write the program as V8 compiles it (the executable's PROGRAM_SOURCE_ASSET). */
export const BUILD_PROGRAM_ENV = 'TEA_BUILD_PROGRAM'

/** Set to 1 to have the loader say on stderr whether the code cache was used (tests, diagnosis). */
export const TRACE_ENV = 'TEA_TRACE_LOADER'

// The program is a CommonJS module body; vm.Script needs the wrapper Node would add, on a line of its own so
// that the program's lines keep their numbers (`lineOffset`).
const HEAD = '(function (exports, require, module, __filename, __dirname) {\n'
const TAIL = '\n})'

/** Commands whose run makes a plain bundle's code cache: between them they reach the code every run needs. */
const WARMING_COMMANDS = new Set(['run', 'resume', 'worker'])

interface ProgramModule {
  exports: unknown
}

/**
 * The text V8 compiles (the program inside the CommonJS wrapper) and the 0-based line the program starts on, out
 * of the file's bytes. Built in one buffer and decoded once: the program is ~700 KB, and each string made on the
 * way (a decoded file, a slice with its escapes undone, the wrapper joined on) was another copy that stayed in
 * V8's large-object space until a full GC, which a short run never reaches (~3 MB of a 3-node run's peak RSS;
 * issue 14). The build keeps the program ASCII (scripts/build/program.mjs), so V8 stores it at a byte a character.
 */
export function programOf(bytes: Uint8Array): { source: string; line: number } {
  const file = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const { start, line } = programStart(file)
  const close = file.lastIndexOf('*/')
  const end = close > start ? close - 1 : file.length
  const out = Buffer.allocUnsafeSlow(HEAD.length + (end - start) + TAIL.length)
  let n = out.write(HEAD, 0, 'latin1')
  let from = start
  for (let esc = file.indexOf(COMMENT_END_ESCAPED, from); esc !== -1 && esc < end; esc = file.indexOf(COMMENT_END_ESCAPED, from)) {
    n += file.copy(out, n, from, esc)
    n += out.write('*/', n, 'latin1')
    from = esc + COMMENT_END_ESCAPED.length
  }
  n += file.copy(out, n, from, end)
  n += out.write(TAIL, n, 'latin1')
  return { source: out.toString('utf8', 0, n), line }
}

/** Where the program starts in the file, as a byte offset and a 0-based line. */
function programStart(file: Buffer): { start: number; line: number } {
  // The mark opens a line right after the loader (which quotes it, but never at a line's start): found from the
  // front in the first few kilobytes, not from the back through the whole program.
  const at = file.indexOf(`\n${PROGRAM_MARK}`)
  if (at < 0) throw new Error('tea: this file carries no program (it was not made by build.mjs)')
  const start = at + 1 + PROGRAM_MARK.length
  let line = 0
  for (let i = file.indexOf(10); i !== -1 && i < start; i = file.indexOf(10, i + 1)) line++
  return { start, line }
}

/**
 * An executable's program: decoded once from its asset (ASCII, so latin1 is exact and the fastest decode); the
 * line it starts on is read from the head of the file, which the same build carries.
 */
function seaProgram(sea: SeaApi): { source: string; line: number } {
  const file = rawAsset(sea, PROGRAM_ASSET)
  const compiled = rawAsset(sea, PROGRAM_SOURCE_ASSET)
  const { line } = programStart(Buffer.from(file.buffer, file.byteOffset, file.byteLength))
  return { source: Buffer.from(compiled.buffer, compiled.byteOffset, compiled.byteLength).toString('latin1'), line }
}

export function isVersionOnly(args: readonly string[]): boolean {
  return args.length === 1 && (args[0] === '--version' || args[0] === '-V' || args[0] === 'version')
}

/** Runs the file's program as `module` (or answers --version): the bundle's whole top level calls this. */
export function boot(module: ProgramModule, require: NodeJS.Require, filename: string): void {
  const inWorker = isPoolWorker()
  if (!inWorker && isVersionOnly(process.argv.slice(2))) {
    print(1, `${versionLine()}\n`)
    return
  }
  const trace = process.env[TRACE_ENV] === '1'
  const started = trace ? performance.now() : 0
  const rss: number[] = trace ? [process.memoryUsage.rss()] : []
  const sea = seaApi(require)
  const { source, line } = sea ? seaProgram(sea) : programOf(readFileSync(filename))
  const programOut = process.env[BUILD_PROGRAM_ENV]
  if (programOut) writeFileSync(programOut, source, 'latin1')
  const cache = sea ? seaCache(sea) : fileCache(source)
  const script = new vm.Script(source, {
    filename,
    lineOffset: line - 1,
    ...(cache.data ? { cachedData: cache.data } : {}),
  })
  const used = cache.data !== undefined && !script.cachedDataRejected
  const compiled = trace ? performance.now() : 0
  if (trace) rss.push(process.memoryUsage.rss())
  const out = process.env[BUILD_CACHE_ENV] || (used || inWorker || !cache.path || !warming() ? undefined : cache.path)
  if (out) {
    // V8 stamps a cache with its flags; one made after they changed would be rejected by the next start. (node:v8
    // is required here, not imported: it costs every start ~0.7 ms, and only a start that writes needs it.)
    const { cachedDataVersionTag } = require('node:v8') as typeof import('node:v8')
    const tag = cachedDataVersionTag()
    // Only the cache dir's own layout is pruned: the build's path (BUILD_CACHE_ENV) is a file in its work folder.
    const prune = out === cache.path
    process.once('exit', (code) => code === 0 && cachedDataVersionTag() === tag && writeCache(out, script.createCachedData(), prune))
  }
  if (typeof __TEA_PROGRAM_HASH__ !== 'undefined') (globalThis as Record<symbol, unknown>)[PROGRAM_ID] = __TEA_PROGRAM_HASH__
  const run = script.runInThisContext() as (...args: unknown[]) => void
  run.call(module.exports, module.exports, require, module, filename, dirname(filename))
  if (trace) {
    const ms = (t: number): string => `${t.toFixed(1)} ms`
    const state = cache.data ? (used ? 'used' : 'rejected') : 'absent'
    print(
      2,
      `tea: loader at ${ms(started)}, program compiled in ${ms(compiled - started)} (code cache ${state}: ${cache.from}), top level ran in ${ms(performance.now() - compiled)}\n`,
    )
    // Where peak memory goes (issue 14): RSS as the loader starts, after the compile, and the peak at exit.
    const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`
    process.once('exit', () =>
      print(
        2,
        `tea: RSS ${mib(rss[0]!)} at the loader, ${mib(rss[1]!)} after the compile; peak ${mib(process.resourceUsage().maxRSS * 1024)}\n`,
      ),
    )
  }
}

// --- internal ---

interface Cache {
  data?: Uint8Array
  /** Where a plain bundle keeps its cache (absent inside an executable, which carries its own). */
  path?: string
  from: string
}

/** An asset in place where Node can (20.12+), else a copy. */
function rawAsset(sea: SeaApi, key: string): Uint8Array {
  return new Uint8Array(sea.getRawAsset ? sea.getRawAsset(key) : sea.getAsset(key))
}

function seaCache(sea: SeaApi): Cache {
  try {
    return { data: rawAsset(sea, CODE_CACHE_ASSET), from: 'executable' }
  } catch {
    return { from: 'executable' }
  }
}

function fileCache(source: string): Cache {
  // Coverage makes V8 compile differently; a cache made under it would not serve a plain run.
  if (process.env.NODE_V8_COVERAGE) return { from: 'off under coverage' }
  // The build's hash of the program names its folder (V8 itself checks only the source's length).
  const program = `${typeof __TEA_PROGRAM_HASH__ === 'undefined' ? 'source' : __TEA_PROGRAM_HASH__}-${source.length}`
  const path = join(cacheDir(), 'code', program, `${process.version}-${process.arch}-${flagsKey()}.cache`)
  try {
    return { data: readFileSync(path), path, from: path }
  } catch {
    return { path, from: path }
  }
}

/** V8 rejects a cache made under other V8 flags; one file per set of flags keeps two kinds of callers apart. */
function flagsKey(): string {
  const text = `${process.execArgv.join(' ')}|${process.env.NODE_OPTIONS ?? ''}`
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16).padStart(8, '0')
}

function warming(): boolean {
  return WARMING_COMMANDS.has(process.argv[2] ?? '')
}

/** Caches of this many builds are kept; older ones go when a new one is written (each is about 1 MB). */
const KEEP_PROGRAMS = 4

/** A program's folder under `<cache>/code`, as fileCache names it: `<program id, or source>-<length>`. */
function isProgramFolder(name: string): boolean {
  const [id, length, ...rest] = name.split('-')
  return rest.length === 0 && (id === 'source' || isProgramId(id!)) && /^\d+$/.test(length ?? '')
}

function writeCache(file: string, bytes: Uint8Array, prune: boolean): void {
  writeKept(file, bytes, prune ? () => keepNewest(dirname(dirname(file)), KEEP_PROGRAMS, isProgramFolder) : undefined)
}

/** Straight to the descriptor, as the CLI writes (src/cli/io.ts): creating process.stdout costs ~3–5 ms. */
function print(fd: 1 | 2, text: string): void {
  try {
    writeSync(fd, text)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EAGAIN') (fd === 1 ? process.stdout : process.stderr).write(text)
    // EPIPE: nobody is reading
  }
}

function isPoolWorker(): boolean {
  return (process as { __tinypool_state__?: { isTinypoolWorker?: boolean } }).__tinypool_state__?.isTinypoolWorker === true
}
