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
 * the file. One file still serves both roles: inside a tinypool worker the program exports the pool's handler
 * instead of starting the CLI (build.mjs, `entrySource`).
 *
 * An executable carries the program as V8 compiles it (wrapped, escapes undone) and its code cache in a tail
 * appended after the SEA's own bytes (see `tailOf`; this loader writes it during the build's warm-up run). A start
 * reads the two with `pread` instead of mapping them as SEA assets: mapped, their 2 MB stayed in the process's
 * resident memory for its whole life; read, only the decoded program stays, and the cache's buffer is freed once
 * V8 has deserialised it (~1.8 MiB less peak RSS per process; issue 14).
 */

import { closeSync, fstatSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { PROGRAM_ID, isProgramId, versionLine } from '../core/build-info.ts'
import { V8_FLAGS, type V8FlagSwitch, withNodeCache } from '../core/builtin.ts'
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
import { type SeaApi, seaApi } from './sea-api.ts'

/** The line that opens the program's comment, and the escape for star-slash inside it. */
export const PROGRAM_MARK = '/*tea:program\n'
export const COMMENT_END_ESCAPED = '*\x01/'

/** The SEA asset holding the file itself (the workers load it too; a start without a tail compiles it). */
export const PROGRAM_ASSET = 'tea.cjs'

/**
 * Set by the build: where to write, at the warm-up run's exit, the executable's tail (the program as compiled and
 * the code cache of what the run compiled). The build appends it to the executable.
 */
export const BUILD_TAIL_ENV = 'TEA_BUILD_TAIL'

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
 * The executable's tail, 20 bytes of footer at the very end of the file saying how long the two parts before it
 * are, so that it is found from the end whatever the SEA before it holds:
 *
 *     <program as V8 compiles it, ASCII> <code cache> "tea-tail" <u32 LE: program bytes> <u32: cache bytes> <u32: line>
 *
 * `line` is the 0-based line the program starts on in `tea.cjs`, for error positions. ELF loaders ignore bytes
 * after the last segment, and Node finds its SEA blob through the program headers, so the tail changes nothing else.
 */
const TAIL_MAGIC = 'tea-tail'
const FOOTER_BYTES = TAIL_MAGIC.length + 12

export interface Tail {
  source: string
  line: number
  cache: Uint8Array
}

export function tailOf({ source, line, cache }: Tail): Buffer {
  const footer = Buffer.alloc(FOOTER_BYTES)
  footer.write(TAIL_MAGIC, 0, 'latin1')
  footer.writeUInt32LE(source.length, 8)
  footer.writeUInt32LE(cache.byteLength, 12)
  footer.writeUInt32LE(line, 16)
  return Buffer.concat([Buffer.from(source, 'latin1'), cache, footer])
}

/** The tail at the end of `file`, or undefined when it has none (a build before tails, or a damaged file). */
export function readTail(file: string): Tail | undefined {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    if (size < FOOTER_BYTES) return undefined
    const footer = Buffer.alloc(FOOTER_BYTES)
    if (readSync(fd, footer, 0, FOOTER_BYTES, size - FOOTER_BYTES) !== FOOTER_BYTES) return undefined
    if (footer.toString('latin1', 0, 8) !== TAIL_MAGIC) return undefined
    const [programBytes, cacheBytes, line] = [footer.readUInt32LE(8), footer.readUInt32LE(12), footer.readUInt32LE(16)]
    const start = size - FOOTER_BYTES - cacheBytes - programBytes
    if (start < 0) return undefined
    // Read, not mapped: nothing holds the buffer once the program's string is made and V8 has read the cache, so
    // its memory goes back at the next collection. One buffer serves both, the cache read over the program once
    // decoded: every page of a fresh buffer costs the start a fault (~1 ms a megabyte here).
    const buffer = Buffer.allocUnsafeSlow(Math.max(programBytes, cacheBytes))
    if (readSync(fd, buffer, 0, programBytes, start) !== programBytes) return undefined
    const source = buffer.toString('latin1', 0, programBytes)
    if (readSync(fd, buffer, 0, cacheBytes, start + programBytes) !== cacheBytes) return undefined
    return { source, line, cache: buffer.subarray(0, cacheBytes) }
  } finally {
    closeSync(fd)
  }
}

/**
 * An executable's program and code cache, from its tail (ASCII, so latin1 is exact and the fastest decode). An
 * executable without one (its tail cut off) still runs: the program is compiled from the `tea.cjs` asset.
 */
function seaProgram(sea: SeaApi): { source: string; line: number; cache?: Uint8Array } {
  return readTail(process.execPath) ?? programOf(rawAsset(sea, PROGRAM_ASSET))
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
  if (!inWorker) flagSwitch(require) // a worker's thread leaves V8's flags, the process's, to the main thread
  const [sea, vm] = withNodeCache(() => {
    // Every command that runs an agent makes one (stopping on signals): reading the global loads its module.
    void globalThis.AbortController
    return [seaApi(require), require('node:vm') as typeof import('node:vm')] as const
  })
  const { source, line, cache: carried } = sea ? seaProgram(sea) : { ...programOf(readFileSync(filename)), cache: undefined }
  const cache: Cache = sea ? { data: carried, owned: carried !== undefined, from: 'executable' } : fileCache(source)
  const script = new vm.Script(source, {
    filename,
    lineOffset: line - 1,
    ...(cache.data ? { cachedData: cache.data } : {}),
  })
  const used = cache.data !== undefined && !script.cachedDataRejected
  const freed = cache.data !== undefined && cache.owned === true && release(cache.data)
  const compiled = trace ? performance.now() : 0
  if (trace) rss.push(process.memoryUsage.rss())
  const tailOut = process.env[BUILD_TAIL_ENV]
  const out = tailOut || (used || inWorker || !cache.path || !warming() ? undefined : cache.path)
  if (out) {
    atCleanExit(() => {
      // The build's tail is a file in its work folder; only the cache dir's own layout is pruned.
      if (tailOut) writeFileSync(tailOut, tailOf({ source, line, cache: script.createCachedData() }))
      else keepCodeCache(out, script.createCachedData(), isProgramFolder)
    })
  }
  if (typeof __TEA_PROGRAM_HASH__ !== 'undefined') (globalThis as Record<symbol, unknown>)[PROGRAM_ID] = __TEA_PROGRAM_HASH__
  const run = script.runInThisContext() as (...args: unknown[]) => void
  run.call(module.exports, module.exports, require, module, filename, dirname(filename))
  if (trace) {
    const ms = (t: number): string => `${t.toFixed(1)} ms`
    const state = cache.data ? (used ? 'used' : 'rejected') : 'absent'
    const buffer = freed ? '; its buffer freed' : ''
    print(
      2,
      `tea: loader at ${ms(started)}, program compiled in ${ms(compiled - started)} (code cache ${state}: ${cache.from}${buffer}), top level ran in ${ms(performance.now() - compiled)}\n`,
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

/**
 * What V8 13.6 starts with for the flags the executables set to hold the optimising compilers back (their
 * execArgv, scripts/build/sea-build.mjs: Maglev after 15,000 calls, TurboFan after 30,000): its Maglev makes
 * TurboFan wait for 10,000 calls, not the 3,000 `--v8-options` prints.
 */
const OPTIMISER_START: Readonly<Record<string, string>> = {
  '--invocation-count-for-maglev': '400',
  '--invocation-count-for-turbofan': '10000',
}

/** The Node option that lets the loader reach V8's flags without `node:v8` (the executables start with it). */
const EXPOSE_INTERNALS = '--expose-internals'

/**
 * V8 stamps code caches with a hash of its non-default flags, so under the optimiser flags Node rejects its own
 * cache of its built-in modules and compiles each one it loads from source (`node:http` and the streams under it,
 * at a first model call: ~8 ms instead of ~2.4). Setting the flags after Node's start instead is no cure: functions
 * made hot by then (Node's path helpers) keep V8's default budget and are optimised anyway (+2 MiB in a 3-node run).
 * So the executables start with them, and `withNodeCache` (src/core/builtin.ts) switches back to V8's start
 * values while a built-in loads. The switch goes through Node's internal binding, which EXPOSE_INTERNALS opens
 * (the warning its module prints is silenced): `node:v8` would cost 2–3.4 MiB, as it loads Node's streams. It is
 * left only when switching back restores a different flag hash, and forth the same one.
 */
function flagSwitch(require: NodeJS.Require): void {
  const argv = process.execArgv
  const name = (flag: string): string => flag.split('=')[0]!
  const own = argv.filter((a) => name(a) in OPTIMISER_START)
  if (!argv.includes(EXPOSE_INTERNALS) || own.length === 0) return
  const start = own.map((a) => `${name(a)}=${OPTIMISER_START[name(a)]}`)
  const v8 = v8Binding(require)
  if (!v8) return
  const set = (flags: string): void => v8.setFlagsFromString(flags)
  // Each hash is read after setting its flags: in a pool worker the process may hold the start flags already
  // (src/pool/pool.ts, a worker's own start), and this leaves the executables' own flags set.
  const tagWith = (flags: readonly string[]): number => {
    for (const f of flags) set(f)
    return v8.cachedDataVersionTag()
  }
  const startTag = tagWith(start)
  const ownTag = tagWith(own)
  if (startTag === ownTag || tagWith(start) !== startTag || tagWith(own) !== ownTag) return
  const flags: V8FlagSwitch = { set, own, start }
  ;(globalThis as Record<symbol, unknown>)[V8_FLAGS] = flags
}

interface V8Binding {
  setFlagsFromString(flags: string): void
  cachedDataVersionTag(): number
}

function v8Binding(require: NodeJS.Require): V8Binding | undefined {
  const warn = process.emitWarning
  process.emitWarning = () => {} // "These APIs are for internal testing only"
  try {
    return (require('internal/test/binding') as { internalBinding(name: 'v8'): V8Binding }).internalBinding('v8')
  } catch {
    return undefined
  } finally {
    process.emitWarning = warn
  }
}

// --- internal ---

interface Cache {
  data?: Uint8Array
  /**
   * `data` was read into a buffer of the loader's own, which nothing else holds: not an asset mapped in place, and
   * not a slice of Node's shared pool, where readFileSync puts a file of under 4 KB (a cache file cut short).
   */
  owned?: boolean
  /** Where a plain bundle keeps its cache (absent inside an executable, which carries its own). */
  path?: string
  from: string
}

/** An asset in place where Node can (20.12+), else a copy. */
function rawAsset(sea: SeaApi, key: string): Uint8Array {
  return new Uint8Array(sea.getRawAsset ? sea.getRawAsset(key) : sea.getAsset(key))
}

function fileCache(source: string): Cache {
  if (cachingOff()) return { from: 'off under coverage' }
  // The build's hash of the program names its folder (V8 itself checks only the source's length).
  const path = codeCacheFile(`${typeof __TEA_PROGRAM_HASH__ === 'undefined' ? 'source' : __TEA_PROGRAM_HASH__}-${source.length}`)
  return { ...readCodeCache(path), path, from: path }
}

function warming(): boolean {
  return WARMING_COMMANDS.has(process.argv[2] ?? '')
}

/** A program's folder under `<cache>/code`, as fileCache names it: `<program id, or source>-<length>`. */
function isProgramFolder(name: string): boolean {
  const [id, length, ...rest] = name.split('-')
  return rest.length === 0 && (id === 'source' || isProgramId(id!)) && /^\d+$/.test(length ?? '')
}
