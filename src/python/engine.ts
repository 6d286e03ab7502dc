/**
 * CPython compiled to WebAssembly (the pyodide package), with its standard library, started once per pool worker
 * that needs it (task.ts), never on the main thread: a runaway loop costs its worker, which the pool terminates at
 * the time limit. Nothing is downloaded: Pyodide reads its files from the folder tea carries them in, and no
 * package beyond the standard library is ever installed. The agent's workspace is mounted at its own path and is
 * the working directory, so `open('data.txt')` reads the file an agent's `file.*` actions would.
 */

import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { existsSync } from 'node:fs'
import { release } from '../sea/code-cache.ts'
import { GLUE } from './glue.ts'
import { dropSnapshot, keepSnapshot, RESEED, readSnapshot, snapshotFile, snapshotsOff } from './snapshot.ts'

interface PyFunction {
  (...args: unknown[]): unknown
}
interface Pyodide {
  runPython(code: string): unknown
  /** The interpreter's memory as it stands, for `_loadSnapshot` (only after a start with `_makeSnapshot`). */
  makeMemorySnapshot(): Uint8Array
  globals: { get(name: string): PyFunction }
  setStdout(options: { batched: (line: string) => void }): void
  setStderr(options: { batched: (line: string) => void }): void
  FS: {
    mkdirTree(path: string): void
    mount(type: unknown, options: { root: string }, mountpoint: string): void
    filesystems: { NODEFS: unknown }
  }
}

export interface PythonFiles {
  /** Pyodide's loader (pyodide.js, carried as pyodide.cjs); its other files sit beside it. */
  loader: string
}

export type PythonOutcome =
  | { kind: 'done'; update: Record<string, unknown>; output: string[] }
  | { kind: 'error'; line?: number; message: string; output: string[] }

export class PythonEngine {
  private output: string[] = []
  private readonly mounted = new Set<string>()

  private constructor(private readonly py: Pyodide) {
    const keep = (line: string): void => void this.output.push(line)
    py.setStdout({ batched: keep })
    py.setStderr({ batched: keep })
    py.runPython(GLUE)
  }

  /** Starts an interpreter: from the cache dir's snapshot of a started one when there is one (snapshot.ts). */
  static async start(files: PythonFiles): Promise<PythonEngine> {
    const { loadPyodide } = createRequire(files.loader)(files.loader) as {
      loadPyodide(options: Record<string, unknown>): Promise<Pyodide>
    }
    const options = { indexURL: `${dirname(files.loader)}/`, stdout: () => {}, stderr: () => {} }
    if (snapshotsOff()) return new PythonEngine(await loadPyodide(options))
    const file = snapshotFile(files.loader)
    const saved = readSnapshot(file)
    if (saved) {
      try {
        const py = await loadPyodide({ ...options, _loadSnapshot: saved })
        py.runPython(RESEED)
        return new PythonEngine(py)
      } catch {
        dropSnapshot(file) // cut short, or made by another Pyodide: made again below
      } finally {
        release(saved) // its bytes were copied into the interpreter's memory
      }
    }
    const py = await loadPyodide({ ...options, _makeSnapshot: true })
    const made = py.makeMemorySnapshot()
    keepSnapshot(file, made)
    release(made)
    return new PythonEngine(py)
  }

  /**
   * Runs `run:` code (TEA's contract) with `workspace` mounted and current. With `reflection`, it is a
   * `reflection.loop` generator, corrector or evaluator (TEA's other contract, glue.ts `tea_reflect`), its `output`
   * in scope, and the update is `{result: the value of its variable result}`.
   */
  run(code: string, state: unknown, variables: unknown, workspace: string | undefined, reflection?: { output: unknown }): PythonOutcome {
    if (workspace) this.enter(workspace)
    this.output = []
    const args = [code, JSON.stringify(state ?? {}), JSON.stringify(variables ?? {})]
    const call = reflection
      ? this.py.globals.get('tea_reflect')(...args, JSON.stringify(reflection.output ?? null))
      : this.py.globals.get('tea_run')(...args)
    const out = JSON.parse(String(call)) as { ok?: unknown; error?: string; line?: number | null }
    const output = this.output
    if (out.error === undefined)
      return { kind: 'done', update: reflection ? { result: out.ok ?? null } : (out.ok as Record<string, unknown>), output }
    return { kind: 'error', message: out.error, ...(out.line ? { line: out.line } : {}), output }
  }

  /** Compiles `code` without running it (`asIs`: as reflection code is run, never as a function body). */
  check(code: string, asIs = false): { line?: number; message: string } | undefined {
    const found = this.py.globals.get('tea_check')(code, asIs)
    if (found === undefined || found === null) return undefined
    const e = JSON.parse(String(found)) as { error: string; line?: number | null }
    return { message: e.error, ...(e.line ? { line: e.line } : {}) }
  }

  private enter(workspace: string): void {
    if (!this.mounted.has(workspace) && existsSync(workspace)) {
      this.py.FS.mkdirTree(workspace)
      this.py.FS.mount(this.py.FS.filesystems.NODEFS, { root: workspace }, workspace)
      this.mounted.add(workspace)
    }
    if (this.mounted.has(workspace)) this.py.runPython(`import os as _os; _os.chdir(${JSON.stringify(workspace)})`)
  }
}
