/**
 * One CPython interpreter (Pyodide) for one run of `run:` code, started from the cache dir's memory snapshot when
 * there is one (snapshot.ts) and dropped after the run: whatever the code patched, mounted, wrote or left running
 * (`json.dumps = …`, a module's globals, a temporary file, a corrupted heap) dies with it, and the next run starts
 * from the snapshot again (issue 28, item 7). The compiled WebAssembly module is kept for the worker's life, so a
 * start costs the snapshot's copy, not a compile.
 *
 * A run goes: the inputs are written into the interpreter's MEMFS as files, the workspace is mounted (workspace-fs.ts),
 * the gate is locked (gate.ts: from here no JavaScript but the file system, clocks and stdout answers), and
 * `tea_main()` runs through the C API (`PyRun_SimpleString`), which needs no JavaScript FFI; its answer is read back
 * from a file, bounded. Nothing of Pyodide's JavaScript API is called after the lock.
 */

import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { release } from '../sea/code-cache.ts'
import { Gate, GateRefusal } from './gate.ts'
import { GLUE } from './glue.ts'
import { dropSnapshot, keepSnapshot, RESEED, readSnapshot, snapshotFile, snapshotsOff } from './snapshot.ts'
import { workspaceFs, type EmscriptenFS } from './workspace-fs.ts'
import { capTempFiles, type Memfs } from './temp-files.ts'
import { wasm, type WasmMemory, type WasmModule } from './wasm.ts'

interface Pyodide {
  runPython(code: string): unknown
  makeMemorySnapshot(): Uint8Array
  globals: { get(name: string): (...args: unknown[]) => unknown }
  setStdout(options: { write: (bytes: Uint8Array) => number }): void
  setStderr(options: { write: (bytes: Uint8Array) => number }): void
  ERRNO_CODES: Record<string, number>
  FS: EmscriptenFS & {
    lookupNode(parent: unknown, name: string): { contents?: ArrayBufferView | Record<string, unknown> }
    mkdirTree(path: string): void
    mount(type: unknown, options: Record<string, unknown>, mountpoint: string): void
    chdir(path: string): void
    writeFile(path: string, data: string): void
    readFile(path: string, options: { encoding: 'utf8' }): string
    lstat(path: string): { mode: number; size: number }
    filesystems: { MEMFS: Memfs }
  }
  _module: {
    _PyRun_SimpleString(ptr: number): number
    stringToNewUTF8(text: string): number
    _free(ptr: number): void
  }
}

export interface PythonFiles {
  /** Pyodide's loader (pyodide.js, carried as pyodide.cjs); its other files sit beside it. */
  loader: string
}

/** What one run hands the interpreter, as JSON (the glue reads it from a file). */
export interface RunInput {
  code: string
  state: unknown
  variables: unknown
  reflection?: { output: unknown }
}

export type RunEnd =
  | { kind: 'answer'; text: string; overLimit: boolean; usedBytes: number }
  | { kind: 'refused'; what: string }
  | { kind: 'memory'; usedBytes: number }
  | { kind: 'crashed'; message: string }

/** The most of the code's printing kept for the run's log; the rest is dropped, and one line says so. */
const OUTPUT_LIMIT = 1024 * 1024
/** The most the answer file may hold (the update goes through the engine's bounded JSON reader next). */
const ANSWER_LIMIT = 64 * 1024 * 1024
const IN = '/tea/in.json'
const OUT = '/tea/out.json'

let compiled: { file: string; module: Promise<WasmModule> } | undefined

export class Interpreter {
  private output: string[] = []
  private outputBytes = 0
  private partial = ''
  private used = false
  private readonly decoder = new TextDecoder()

  private constructor(
    private readonly py: Pyodide,
    private readonly gate: Gate,
  ) {
    const write = (bytes: Uint8Array): number => {
      this.keep(this.decoder.decode(bytes, { stream: true }))
      return bytes.length
    }
    py.setStdout({ write })
    py.setStderr({ write })
    capTempFiles(py.FS.filesystems.MEMFS, py.FS, py.ERRNO_CODES, gate)
    py.runPython(GLUE)
    py.FS.mkdirTree('/tea')
  }

  /** Starts an interpreter: from the cache dir's snapshot of a started one when there is one (snapshot.ts). */
  static async start(files: PythonFiles): Promise<Interpreter> {
    const gate = new Gate()
    const { loadPyodide } = createRequire(files.loader)(files.loader) as {
      loadPyodide(options: Record<string, unknown>): Promise<Pyodide>
    }
    const indexURL = `${dirname(files.loader)}/`
    const module = await wasmModule(join(indexURL, 'pyodide.asm.wasm'))
    const options = {
      indexURL,
      // The `js` module is this empty object, not globalThis; the gate closes the FFI behind it anyway.
      jsglobals: Object.create(null),
      env: {},
      // sys.executable and $_ would otherwise name the host's program.
      _sysExecutable: 'python',
      stdout: () => {},
      stderr: () => {},
    }
    const load = (more: Record<string, unknown>) => gated(gate, module, () => loadPyodide({ ...options, ...more }))
    if (snapshotsOff()) return new Interpreter(await load({}), gate)
    const file = snapshotFile(files.loader)
    const saved = readSnapshot(file)
    if (saved) {
      try {
        const py = await load({ _loadSnapshot: saved })
        py.runPython(RESEED)
        return new Interpreter(py, gate)
      } catch {
        dropSnapshot(file) // cut short, or made by another Pyodide: made again below
      } finally {
        release(saved) // its bytes were copied into the interpreter's memory
      }
    }
    const py = await load({ _makeSnapshot: true })
    const made = py.makeMemorySnapshot()
    keepSnapshot(file, made)
    release(made)
    return new Interpreter(py, gate)
  }

  /** Compiles `code` without running it (`asIs`: as reflection code is run). Leaves the interpreter unused. */
  check(code: string, asIs: boolean): { line?: number; message: string } | undefined {
    const found = this.py.globals.get('tea_check')(code, asIs)
    if (found === undefined || found === null) return undefined
    const e = JSON.parse(String(found)) as { error: string; line?: number | null }
    return { message: e.error, ...(e.line ? { line: e.line } : {}) }
  }

  /**
   * Runs `input` once, with `workspace` mounted and current, under `limitBytes` of memory. The interpreter is
   * spent afterwards, whatever happened: the caller drops it.
   */
  run(input: RunInput, workspace: string | undefined, limitBytes: number): { end: RunEnd; output: string[] } {
    if (this.used) throw new Error('a Python interpreter runs code once')
    this.used = true
    const { FS } = this.py
    FS.writeFile(IN, JSON.stringify(input))
    const mounted = workspace ? this.mount(workspace) : undefined
    const call = this.py._module.stringToNewUTF8('tea_main()')
    this.output = []
    let end: RunEnd
    try {
      this.gate.lock(limitBytes)
      this.py._module._PyRun_SimpleString(call)
      end = this.ended()
    } catch (e) {
      end = this.ended(e)
    } finally {
      mounted?.dispose()
    }
    if (this.partial) this.keep('\n')
    return { end, output: this.output }
  }

  private mount(workspace: string): { dispose(): void } | undefined {
    let fs: ReturnType<typeof workspaceFs>
    try {
      fs = workspaceFs(this.py.FS, this.py.ERRNO_CODES, workspace)
    } catch {
      return undefined // no workspace folder (yet): the code runs in /home/pyodide, as before
    }
    this.py.FS.mkdirTree(workspace)
    this.py.FS.mount(fs.type, {}, workspace)
    this.py.FS.chdir(workspace)
    return fs
  }

  /** How the run ended: what the gate saw first, then the answer file. */
  private ended(thrown?: unknown): RunEnd {
    const usedBytes = this.gate.memoryBytes() + this.gate.fileBytes
    if (this.gate.refused) return { kind: 'refused', what: this.gate.refused }
    if (thrown !== undefined) {
      if (thrown instanceof GateRefusal) return { kind: 'refused', what: thrown.message }
      // CPython aborts where a failed allocation is not survivable: over the limit, that is the limit's doing.
      if (this.gate.overLimit) return { kind: 'memory', usedBytes }
      return { kind: 'crashed', message: thrown instanceof Error ? thrown.message : String(thrown) }
    }
    try {
      // The code may have replaced the answer file with anything: only a plain file of bounded size is read.
      const stat = this.py.FS.lstat(OUT)
      if (!this.py.FS.isFile(stat.mode) || stat.size > ANSWER_LIMIT)
        return { kind: 'crashed', message: 'its answer file was tampered with' }
      const text = this.py.FS.readFile(OUT, { encoding: 'utf8' })
      return { kind: 'answer', text, overLimit: this.gate.overLimit, usedBytes }
    } catch {
      if (this.gate.overLimit) return { kind: 'memory', usedBytes }
      return { kind: 'crashed', message: 'the interpreter ended without an answer' }
    }
  }

  /** Splits what the code printed into lines for the log, up to OUTPUT_LIMIT bytes in all. */
  private keep(text: string): void {
    if (this.outputBytes > OUTPUT_LIMIT) return
    this.outputBytes += text.length
    const lines = (this.partial + text).split('\n')
    this.partial = lines.pop() ?? ''
    this.output.push(...lines)
    if (this.outputBytes > OUTPUT_LIMIT) {
      this.partial = ''
      this.output.push(`(output cut: the code printed more than ${OUTPUT_LIMIT} bytes)`)
    }
  }
}

/**
 * Runs `load` (Pyodide's loadPyodide) with WebAssembly.instantiate taken over for Pyodide's module: its imports are
 * wrapped by the gate before the instance is made, from the module compiled once. Pyodide offers no hook for this
 * that works inside tea's bundle (its createPyodideModule needs a dynamic import, which the bundle's loader does
 * not provide), and its own instantiateWasm calls WebAssembly.instantiate. Only an import object with Pyodide's own
 * FFI functions is taken over, so another engine that starts on this thread meanwhile is left alone.
 */
async function gated<T>(gate: Gate, module: WasmModule, load: () => Promise<T>): Promise<T> {
  const api = wasm()
  const instantiate = api.instantiate
  api.instantiate = async (source: unknown, imports?: Record<string, Record<string, unknown>>) => {
    if (typeof imports?.env?.JsProxy_GetAttr_js !== 'function') return instantiate.call(api, source, imports)
    gate.wrapImports(imports)
    const instance = new api.Instance(module, imports)
    gate.capMemory(instance.exports.memory as WasmMemory)
    return { instance, module }
  }
  try {
    return await load()
  } finally {
    api.instantiate = instantiate
  }
}

/** The interpreter's WebAssembly, compiled once per worker and shared by every interpreter it starts. */
function wasmModule(file: string): Promise<WasmModule> {
  if (compiled?.file !== file) compiled = { file, module: wasm().compile(readFileSync(file)) }
  return compiled.module
}
