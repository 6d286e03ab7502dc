/**
 * CPython compiled to WebAssembly (the pyodide package), with its standard library, on the pool workers that need
 * it (task.ts), never on the main thread: a runaway loop costs its worker, which the pool terminates at the time
 * limit. Nothing is downloaded: Pyodide reads its files from the folder tea carries them in, and no package beyond
 * the standard library is ever installed.
 *
 * Each run gets an interpreter of its own (interpreter.ts), dropped after it: a warm worker carries nothing from one
 * run to the next. The next one is started when the next run asks for it (a restore from the memory snapshot, ~0.2 s
 * on x64, before the code's time limit starts), not as soon as a run ends: started early, it would be alive beside
 * the one just dropped, and a one-node `tea run` would pay its memory at exit for nothing. A compile check (`tea
 * validate`) runs no code and uses the waiting interpreter without spending it.
 */

import { DEFAULT_RUN_MEMORY_MB } from '../actions/types.ts'
import { parseJson } from '../core/json.ts'
import { Interpreter, type PythonFiles, type RunEnd, type RunInput } from './interpreter.ts'

export type { PythonFiles } from './interpreter.ts'

export type PythonOutcome =
  | { kind: 'done'; update: Record<string, unknown>; output: string[] }
  | { kind: 'error'; line?: number; message: string; output: string[] }
  | { kind: 'memory'; usedMb: number; output: string[] }

export class PythonEngine {
  private next: Promise<Interpreter> | undefined

  private constructor(
    private readonly files: PythonFiles,
    first: Interpreter,
  ) {
    this.next = Promise.resolve(first)
  }

  static async start(files: PythonFiles): Promise<PythonEngine> {
    return new PythonEngine(files, await Interpreter.start(files))
  }

  /** Resolves once the interpreter for the next run has started. */
  async ready(): Promise<void> {
    await this.waiting()
  }

  /**
   * Runs `run:` code (TEA's contract) with `workspace` mounted and current, under `memoryMb` of memory. With
   * `reflection`, it is a `reflection.loop` generator, corrector or evaluator (TEA's other contract, glue.ts
   * `tea_reflect`), its `output` in scope, and the update is `{result: the value of its variable result}`.
   */
  async run(
    code: string,
    state: unknown,
    variables: unknown,
    workspace: string | undefined,
    memoryMb: number = DEFAULT_RUN_MEMORY_MB,
    reflection?: { output: unknown },
  ): Promise<PythonOutcome> {
    const interpreter = await this.waiting()
    this.next = undefined // spent by this run; the next run starts its own (waiting)
    const input: RunInput = {
      code,
      state: JSON.stringify(state ?? {}),
      variables: JSON.stringify(variables ?? {}),
      ...(reflection && { output: JSON.stringify(reflection.output ?? null) }),
    } as RunInput
    const { end, output } = interpreter.run(input, workspace, memoryMb * 1024 * 1024)
    return outcome(end, output, reflection !== undefined)
  }

  /** Compiles `code` without running it (`asIs`: as reflection code is run, never as a function body). */
  async check(code: string, asIs = false): Promise<{ line?: number; message: string } | undefined> {
    return (await this.waiting()).check(code, asIs)
  }

  /** The interpreter for the next run, started now if there is none (a start that failed is tried again). */
  private async waiting(): Promise<Interpreter> {
    this.next ??= Interpreter.start(this.files)
    try {
      return await this.next
    } catch (e) {
      this.next = undefined
      throw e
    }
  }
}

function outcome(end: RunEnd, output: string[], reflection: boolean): PythonOutcome {
  switch (end.kind) {
    case 'memory':
      return { kind: 'memory', usedMb: Math.round(end.usedBytes / 1024 / 1024), output }
    case 'refused':
      return {
        kind: 'error',
        message: `the code reached for JavaScript or the host (${end.what}), which Python run: code cannot do`,
        output,
      }
    case 'crashed':
      return { kind: 'error', message: `the interpreter stopped: ${end.message}`, output }
    case 'answer': {
      const out = parseJson(end.text, "the Python code's result", { invalid: 'CODE_ERROR' }) as {
        ok?: unknown
        error?: unknown
        line?: unknown
      }
      if (typeof out !== 'object' || out === null) return { kind: 'error', message: 'the code left no result', output }
      if (out.error === undefined) {
        const ok = out.ok
        if (reflection) return { kind: 'done', update: { result: ok ?? null }, output }
        if (typeof ok !== 'object' || ok === null || Array.isArray(ok)) return { kind: 'error', message: 'the code left no result', output }
        return { kind: 'done', update: ok as Record<string, unknown>, output }
      }
      const line = typeof out.line === 'number' ? out.line : undefined
      const message = String(out.error)
      // A MemoryError the code did not survive, or any failure after the gate refused memory, is the limit's.
      if (end.overLimit || message.startsWith('MemoryError')) return { kind: 'memory', usedMb: Math.round(end.usedBytes / 1048576), output }
      return { kind: 'error', message, ...(line && { line }), output }
    }
  }
}
