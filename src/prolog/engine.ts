/**
 * SWI-Prolog (the engine TEA's runtimes use), compiled to WebAssembly by the swipl-wasm package, started once per
 * thread that needs it — a pool worker (task.ts), never the main thread, so a runaway query costs its worker (the
 * pool terminates it at the time limit) and nothing else. Every call is synchronous inside the engine; the
 * contract itself is Prolog (glue.ts). The engine prints nothing: its output streams are captured and dropped.
 */

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import vm from 'node:vm'
import { TeaError } from '../core/errors.ts'
import type { PrologFiles } from './files.ts'
import { GLUE } from './glue.ts'

interface SwiQuery {
  once(): Record<string, unknown> & { success?: boolean; error?: boolean; message?: string }
}
interface Swipl {
  prolog: {
    query(goal: string, bindings?: Record<string, unknown>): SwiQuery
    load_string(text: string, id?: string): unknown
  }
}
/** The one WebAssembly call made here (the project's type library has no DOM, where WebAssembly is declared). */
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: unknown): Promise<{ instance: unknown; module: unknown }>
}
const wasmApi = (): WasmApi => (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly

type SwiplFactory = (options: Record<string, unknown>) => Promise<Swipl>

/** What a run of `run:` code came to. */
export type RunOutcome =
  | { kind: 'done'; returns: Record<string, unknown> }
  | { kind: 'failed'; line: number; returns: Record<string, unknown> }
  | { kind: 'error'; line: number; message: string }

export type QueryOutcome = { kind: 'solutions'; rows: Array<Record<string, unknown>> } | { kind: 'error'; line: number; message: string }

export class PrologEngine {
  private constructor(private readonly swipl: Swipl) {}

  /** Starts SWI-Prolog from its three files and consults tea's contract. */
  static async start(files: PrologFiles): Promise<PrologEngine> {
    const factory = loadFactory(files.glue)
    const wasm = readFileSync(files.wasm)
    const data = readFileSync(files.data)
    const swipl = await factory({
      arguments: ['-q'],
      // The loader's own ways to find its files read paths relative to itself; hand it the bytes instead.
      instantiateWasm(imports: unknown, done: (instance: unknown, module: unknown) => void) {
        wasmApi()
          .instantiate(wasm, imports)
          .then(
            (r) => done(r.instance, r.module),
            () => {},
          )
        return {}
      },
      getPreloadedPackage: () => data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength),
      locateFile: (file: string) => file,
      print: () => {},
      printErr: () => {},
    })
    const engine = new PrologEngine(swipl)
    engine.must('set_prolog_flag(verbose, silent)')
    engine.loadGlue()
    return engine
  }

  /** Runs `run:` code against `state` (TEA's contract: state/2 in, return/2 out). */
  run(code: string, state: unknown): RunOutcome {
    const r = this.must('tea_run(Code, State, Outcome)', { Code: withPeriod(code), State: JSON.stringify(state ?? {}) })
    const o = r.Outcome as Compound
    const [a, b] = args(o)
    if (o.functor === 'done') return { kind: 'done', returns: JSON.parse(text(a)) }
    if (o.functor === 'failed') return { kind: 'failed', line: Number(a), returns: JSON.parse(text(b)) }
    return { kind: 'error', line: Number(a), message: tidy(text(b)) }
  }

  /** Reads every clause of `code` without running any: undefined, or the first syntax error. */
  check(code: string): { line: number; message: string } | undefined {
    const o = this.must('tea_check(Code, Outcome)', { Code: withPeriod(code) }).Outcome
    if (o === 'ok') return undefined
    const [line, message] = args(o as Compound)
    return { line: Number(line), message: tidy(text(message)) }
  }

  /** Consults `program` and `facts` (`[name, ...args]` each) in a fresh module and finds `goal`'s solutions. */
  query(program: string, facts: unknown[][], goal: string, max: number): QueryOutcome {
    const r = this.must('tea_query(Program, Facts, Goal, Max, Outcome)', {
      Program: program.trim() === '' ? '' : withPeriod(program),
      Facts: JSON.stringify(facts),
      Goal: goal,
      Max: max,
    })
    const o = r.Outcome as Compound
    const [a, b] = args(o)
    if (o.functor === 'solutions') return { kind: 'solutions', rows: JSON.parse(text(a)) }
    return { kind: 'error', line: Number(a), message: tidy(text(b)) }
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

/** The Emscripten loader is CommonJS that reads `__dirname`; it is evaluated from its file, wherever that is. */
function loadFactory(glue: string): SwiplFactory {
  const module = { exports: {} as unknown }
  const fn = vm.compileFunction(readFileSync(glue, 'utf8'), ['module', 'exports', 'require', '__dirname', '__filename'], {
    filename: glue,
  })
  fn(module, module.exports, createRequire(glue), glue.slice(0, glue.lastIndexOf('/')), glue)
  return module.exports as SwiplFactory
}
