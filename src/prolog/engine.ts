/**
 * SWI-Prolog (the engine TEA's runtimes use), compiled to WebAssembly by the swipl-wasm package, started once per
 * thread that needs it — a pool worker (task.ts), never the main thread, so a runaway query costs its worker (the
 * pool terminates it at the time limit) and nothing else. Every call is synchronous inside the engine; the
 * contract itself is Prolog (glue.ts). The engine prints nothing: its output streams are captured and dropped.
 */

import { readFileSync } from 'node:fs'
import { DEFAULT_RUN_MEMORY_MB } from '../actions/types.ts'
import { TeaError } from '../core/errors.ts'
import type { PrologFiles } from './files.ts'
import { GLUE } from './glue.ts'
import { loadFactory, type HeapGuard } from './loader.ts'

interface SwiQuery {
  once(): Record<string, unknown> & { success?: boolean; error?: boolean; message?: string }
}
interface Swipl {
  prolog: {
    query(goal: string, bindings?: Record<string, unknown>): SwiQuery
    load_string(text: string, id?: string): unknown
  }
}
/** The WebAssembly API used here (the project's type library has no DOM, where WebAssembly is declared). */
interface WasmMemory {
  buffer: ArrayBuffer
}
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: unknown): Promise<{ instance: { exports: Record<string, unknown> }; module: unknown }>
  Memory: abstract new (...args: never[]) => WasmMemory
}
const wasmApi = (): WasmApi => (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly

/** What a run of `run:` code came to. `memory`: it went over its memory limit (settings.run_memory_mb). */
export type RunOutcome =
  | { kind: 'done'; returns: Record<string, unknown> }
  | { kind: 'failed'; line: number; returns: Record<string, unknown> }
  | { kind: 'error'; line: number; message: string }
  | { kind: 'memory' }

export type QueryOutcome =
  | { kind: 'solutions'; rows: Array<Record<string, unknown>> }
  | { kind: 'error'; line: number; message: string }
  | { kind: 'memory' }

const MIB = 1024 * 1024

export class PrologEngine {
  /**
   * True once a run met the heap cap: the engine may have been left half-way through an allocation, and its heap
   * stays as large as the cap, so the worker drops it and the next task starts a fresh one (task.ts).
   */
  spent = false

  private constructor(
    private readonly swipl: Swipl,
    private readonly guard: HeapGuard,
  ) {}

  /** Heap bytes the engine holds with tea's contract loaded: a run's limit is counted above it. */
  private baseline = 0

  /** Starts SWI-Prolog from its three files and consults tea's contract. */
  static async start(files: PrologFiles): Promise<PrologEngine> {
    const factory = loadFactory(files.glue)
    const wasm = readFileSync(files.wasm)
    const data = readFileSync(files.data)
    let memory: WasmMemory | undefined
    // Emscripten keeps this object as its Module: the patched loader reads the cap from it at every growth.
    const options = {
      teaHeapCap: Number.POSITIVE_INFINITY,
      teaHeapRefused: false,
      arguments: ['-q'],
      // The loader's own ways to find its files read paths relative to itself; hand it the bytes instead.
      instantiateWasm(imports: unknown, done: (instance: unknown, module: unknown) => void) {
        wasmApi()
          .instantiate(wasm, imports)
          .then(
            (r) => {
              memory = Object.values(r.instance.exports).find((v): v is WasmMemory => v instanceof wasmApi().Memory)
              done(r.instance, r.module)
            },
            () => {},
          )
        return {}
      },
      getPreloadedPackage: () => data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength),
      locateFile: (file: string) => file,
      print: () => {},
      printErr: () => {},
    }
    const swipl = (await factory(options)) as Swipl
    if (!memory) throw new TeaError('INTERNAL', 'the Prolog engine started without a memory to limit')
    const engine = new PrologEngine(swipl, options)
    engine.must('set_prolog_flag(verbose, silent)')
    engine.loadGlue()
    engine.baseline = memory.buffer.byteLength
    return engine
  }

  /** Runs `run:` code against `state` (TEA's contract: state/2 in, return/2 out), in at most `memoryMb` MiB. */
  run(code: string, state: unknown, memoryMb = DEFAULT_RUN_MEMORY_MB): RunOutcome {
    const r = this.limited(memoryMb, 'tea_glue:tea_run(Code, State, Limit, Outcome)', {
      Code: withPeriod(code),
      State: JSON.stringify(state ?? {}),
    })
    if (!r || r.Outcome === 'memory') return { kind: 'memory' }
    const o = r.Outcome as Compound
    const [a, b] = args(o)
    if (o.functor === 'done') return { kind: 'done', returns: JSON.parse(text(a)) }
    if (o.functor === 'failed') return { kind: 'failed', line: Number(a), returns: JSON.parse(text(b)) }
    return { kind: 'error', line: Number(a), message: tidy(text(b)) }
  }

  /** Reads every clause of `code` without running any: undefined, or the first syntax error. */
  check(code: string): { line: number; message: string } | undefined {
    const o = this.must('tea_glue:tea_check(Code, Outcome)', { Code: withPeriod(code) }).Outcome
    if (o === 'ok') return undefined
    const [line, message] = args(o as Compound)
    return { line: Number(line), message: tidy(text(message)) }
  }

  /** Consults `program` and `facts` (`[name, ...args]` each) in a fresh module and finds `goal`'s solutions. */
  query(program: string, facts: unknown[][], goal: string, max: number, memoryMb = DEFAULT_RUN_MEMORY_MB): QueryOutcome {
    const r = this.limited(memoryMb, 'tea_glue:tea_query(Program, Facts, Goal, Max, Limit, Outcome)', {
      Program: program.trim() === '' ? '' : withPeriod(program),
      Facts: JSON.stringify(facts),
      Goal: goal,
      Max: max,
    })
    if (!r || r.Outcome === 'memory') return { kind: 'memory' }
    const o = r.Outcome as Compound
    const [a, b] = args(o)
    if (o.functor === 'solutions') return { kind: 'solutions', rows: JSON.parse(text(a)) }
    return { kind: 'error', line: Number(a), message: tidy(text(b)) }
  }

  /**
   * Runs one of the glue's entry points under the run's memory limit: the Prolog stacks may take `memoryMb` (the
   * glue sets stack_limit, so a growing term ends as a resource error the code can see), and the heap may grow by
   * `memoryMb` above what the engine needed to start (asserted clauses, atoms and tables live there, outside the
   * stacks). Undefined when the heap met its cap: the engine is spent.
   */
  private limited(memoryMb: number, goal: string, bindings: Record<string, unknown>): Record<string, unknown> | undefined {
    this.guard.teaHeapCap = this.baseline + memoryMb * MIB
    this.guard.teaHeapRefused = false
    try {
      return this.must(goal, { ...bindings, Limit: memoryMb * MIB })
    } catch (e) {
      if (!this.guard.teaHeapRefused) throw e
      return undefined
    } finally {
      if (this.guard.teaHeapRefused) this.spent = true
      this.guard.teaHeapCap = Number.POSITIVE_INFINITY
    }
  }

  private loadGlue(): void {
    this.must('setup_call_cleanup(open_string(Text, In), load_files(user:tea_glue, [stream(In), silent(true)]), close(In))', {
      Text: GLUE,
    })
  }

  private must(goal: string, bindings?: Record<string, unknown>): Record<string, unknown> {
    const r = this.swipl.prolog.query(goal, bindings).once()
    if (r.error) throw new TeaError('INTERNAL', `the Prolog engine failed on ${goal}: ${r.message ?? 'no message'}`)
    if (r.success === false) throw new TeaError('INTERNAL', `the Prolog engine failed on ${goal}`)
    return r
  }
}

interface Compound {
  functor: string
  [name: string]: unknown
}

function args(term: Compound): unknown[] {
  // swipl-wasm keeps the arguments under the functor's name, as one array inside another.
  const a = term[term.functor]
  if (!Array.isArray(a)) return []
  return a.length === 1 && Array.isArray(a[0]) ? a[0] : a
}

/** A Prolog string or atom as JS text (swipl-wasm gives strings as objects with `v`). */
function text(value: unknown): string {
  if (typeof value === 'string') return value
  if (value && typeof value === 'object' && 'v' in value) return String((value as { v: unknown }).v)
  return String(value)
}

/**
 * An engine message as a user reads it: without the stream's address (the line is reported apart), the name of
 * the temporary module the code ran in, or the glue's predicate that called the user's goal.
 */
function tidy(message: string): string {
  // At the start, or after tea_load_code/1's own prefix (an error in the code it loads).
  const at = /Stream <stream>\(0x[0-9a-f]+\):\d+:(\d+) /.exec(message)
  const text = message
    .replace(at?.[0] ?? '', '')
    .replace(/'tmp-[\w-]+':/g, '')
    .replace(/\btea_call\/3: /g, '') // the glue's own predicate, not the user's
    .trim()
  return at ? `${text} (column ${at[1]})` : text
}

/** read_term needs a full stop after the last clause; TEA adds one where the code has none. */
function withPeriod(code: string): string {
  const trimmed = code.trimEnd()
  return trimmed.endsWith('.') ? `${trimmed}\n` : `${trimmed}.\n`
}
