/**
 * Three Prolog engines from npm compared on The Edge Agent (TEA)'s own Prolog code (docs/prolog-engines.md):
 * swipl-wasm (SWI-Prolog in WebAssembly, the engine tea uses), trealla (Trealla Prolog in WebAssembly) and
 * tau-prolog (pure JavaScript).
 *
 * The two engines tea does not use are installed outside the repository, never into it:
 *
 *   mkdir -p /tmp/plcmp && cd /tmp/plcmp && npm init -y && npm install trealla@0.17.10 tau-prolog@0.3.4
 *   npx tsx bench/prolog-engines.ts            (from the repo root; PLCMP_MODULES=<dir> for another node_modules)
 *
 * What it measures, on the Prolog bodies of the TEA corpus (../shared/tea-corpus: the `run:` code of nodes with
 * `language: prolog`, `run: {type: prolog, code}` or a `% prolog` first line, and `validation_constraints` rules):
 *
 * 1. Syntax: each body (with a final '.' added where it has none, as TEA does) read clause by clause by the
 *    engine's own read_term/3 from a stream, nothing run. Before reading, each engine loads what TEA preloads
 *    (lists, apply, aggregate, clpfd) where it has it, so the CLP(FD) operators are defined.
 * 2. Features TEA's bodies use, each probed with small goals in the same preloaded engine, and how many corpus
 *    bodies use each feature (a regular expression per feature: an estimate, not a parse).
 * 3. Start time: median of 5 fresh Node processes, from importing the package to the first answer, and to the
 *    end of TEA's preloads; and the bytes: the package directory with its own dependencies, and the files an
 *    engine needs at run time.
 *
 * It reads nothing from src/: tea's engine adds its own contract (src/prolog/glue.ts) on top of swipl-wasm.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CORPUS, corpusBodies, isObject, type Located, runIn } from './corpus-bodies.ts'
import { dirBytes, median } from './measure.ts'

const root = join(import.meta.dirname, '..')
const MODULES = process.env.PLCMP_MODULES ?? '/tmp/plcmp/node_modules'
const SWIPL_DIR = join(root, 'node_modules', 'swipl-wasm', 'dist', 'swipl')
const ROUNDS = 5

for (const name of ['trealla', 'tau-prolog'])
  if (!existsSync(join(MODULES, name, 'package.json'))) {
    console.error(`${name} is not in ${MODULES}. Install the two extra engines outside the repository:
  mkdir -p /tmp/plcmp && cd /tmp/plcmp && npm init -y && npm install trealla@0.17.10 tau-prolog@0.3.4
or point PLCMP_MODULES at a node_modules directory that has them.`)
    process.exit(1)
  }
if (!existsSync(join(SWIPL_DIR, 'swipl-web.js'))) {
  console.error(`swipl-wasm is not in ${join(root, 'node_modules')}: run npm install in the repository first.`)
  process.exit(1)
}
if (!existsSync(join(CORPUS, 'manifest.json'))) {
  console.error(`The TEA corpus is not at ${CORPUS}.`)
  process.exit(1)
}

// ---------------------------------------------------------------------------------------------------------------
// The corpus's Prolog bodies.

type Body = { kind: 'run' | 'rules'; code: string } & Located

/** Prolog `run:` bodies, and `validation_constraints` rules (as text or `{rules}`). */
const prologBodies = () =>
  corpusBodies((x, { where }) => {
    const out: Array<{ kind: 'run' | 'rules'; code: string; where?: string }> = []
    const code = runIn(x, 'prolog', /^%\s*prolog\b/i)
    if (code !== undefined) out.push({ kind: 'run', code })
    const v = x.validation_constraints
    const rules = typeof v === 'string' ? v : isObject(v) && typeof v.rules === 'string' ? v.rules : undefined
    if (rules !== undefined) out.push({ kind: 'rules', code: rules, where: `${where}/validation_constraints` })
    return out
  })

/** read_term needs a full stop after the last clause; TEA adds one where the code has none. */
function withPeriod(code: string): string {
  const trimmed = code.trimEnd()
  return trimmed.endsWith('.') ? `${trimmed}\n` : `${trimmed}.\n`
}

// ---------------------------------------------------------------------------------------------------------------
// Features: the goals that probe each (run in order, all must succeed) and the text that marks a body as using it.

interface Feature {
  name: string
  steps: string[]
  uses: RegExp
}

const FEATURES: Feature[] = [
  {
    name: 'SWI dicts (`_{a:1}`, get_dict/3)',
    steps: ['D = _{a:1}, get_dict(a, D, V), V == 1'],
    uses: /_\{|\b(get|put)_dict\(|\bdict_pairs\(|\bis_dict\(/,
  },
  {
    name: 'CLP(FD) constraints (`X #= 3+4`, preloaded)',
    steps: ['X #= 3+4, X == 7'],
    uses: /#=|#\\=|#<|#>|\blabel(ing)?\(|\ball_(different|distinct)\(|\b[A-Z]\w*\s+ins?\s+[-\d[]/,
  },
  {
    name: '`use_module(library(clpfd))` as the bodies write it',
    steps: ['use_module(library(clpfd))', 'X #= 3+4, X == 7'],
    uses: /library\(clpfd\)/,
  },
  { name: "`format(atom(A), '~w', [x])`", steps: ["format(atom(A), '~w', [x]), A == x"], uses: /\bformat\(\s*atom\(/ },
  {
    // TEA's bodies turn state text (an atom in TEA) or a string into an atom to match it against atoms.
    name: 'atom_string/2 (atom from an atom or a string)',
    steps: ['atom_string(A, abc), A == abc', 'atom_string(A, "abc"), A == abc'],
    uses: /\batom_string\(/,
  },
  {
    name: 'string_concat/3',
    steps: ['string_concat(ab, cd, S), atom_string(A, S), A == abcd'],
    uses: /\bstring_concat\(/,
  },
  {
    name: 'split_string/4',
    steps: ['split_string("a,b", ",", "", P), length(P, 2)'],
    uses: /\bsplit_string\(/,
  },
  { name: 'sub_atom/5', steps: ['sub_atom(hello, 0, 2, _, S), S == he'], uses: /\bsub_atom\(/ },
  { name: 'nb_setval/2, nb_getval/2', steps: ['nb_setval(plcmp_k, 1), nb_getval(plcmp_k, V), V == 1'], uses: /\bnb_[gs]etval\(/ },
  {
    name: 'aggregate_all(count, ...)',
    steps: ['aggregate_all(count, member(_, [a, b, c]), N), N == 3'],
    uses: /\baggregate_all\(/,
  },
  { name: 'msort/2', steps: ['msort([b, a, b], L), L == [a, b, b]'], uses: /\bmsort\(/ },
  { name: 'between/3', steps: ['findall(X, between(1, 3, X), L), L == [1, 2, 3]'], uses: /\bbetween\(/ },
  {
    name: 'catch/3 of an ISO error',
    steps: ['catch(atom_length(_, _), error(instantiation_error, _), true)'],
    uses: /\bcatch\(/,
  },
  {
    name: 'assertz/1 of a rule',
    steps: ['assertz((plcmp_double(X, Y) :- Y is X * 2)), plcmp_double(3, Z), Z == 6'],
    uses: /\bassertz?\(\s*\(/,
  },
  { name: 'downcase_atom/2', steps: ["downcase_atom('AbC', A), A == abc"], uses: /\bdowncase_atom\(/ },
  {
    name: '"text" is a string (string/1); bodies: any double quote',
    steps: ['X = "ab", string(X)'],
    uses: /"/,
  },
]

// ---------------------------------------------------------------------------------------------------------------
// The engines, each behind the same small interface.

type Outcome = { ok: true } | { ok: false; why: string }

interface Engine {
  /** Runs `goal` once: ok when it succeeds. */
  once(goal: string): Promise<Outcome>
  /** Reads every clause of `code` with the engine's read_term/3: how many it read and the first error. */
  readAll(code: string): Promise<{ clauses: number; error?: string }>
  version: string
  /** The preloads that loaded, and those that did not. */
  preloads: { loaded: string[]; missing: string[] }
}

interface EngineKind {
  name: string
  npm: string
  start(): Promise<Engine>
  /** JavaScript for a fresh `node --input-type=module` process: prints {ready, preloaded} in ms. */
  child: string
  /** Package directories installed (with their own dependencies). */
  packageDir: string
  /** Files the engine needs at run time. */
  runtimeFiles: string[]
}

/** Reads all clauses of stream S; Es is [ok, ..., ok] up to end_of_file, or ends with the first error term. */
const READ_LOOP =
  'findall(E, (repeat, catch((read_term(S, T, []), E = ok), Err, (E = Err, T = end_of_file)), (T == end_of_file, ! ; true)), Es), ' +
  'length(Es, Len), N is Len - 1, last(Es, Last)'

const quiet = (s: string) => s.replace(/\s+/g, ' ').slice(0, 160)

function split(libs: string[], ok: (lib: string, i: number) => boolean): { loaded: string[]; missing: string[] } {
  const loaded = libs.filter(ok)
  return { loaded, missing: libs.filter((l) => !loaded.includes(l)) }
}

// SWI-Prolog (swipl-wasm): the Emscripten loader and its files from node_modules.
interface SwiResult {
  success?: boolean
  error?: boolean
  message?: string
  [k: string]: unknown
}
interface Swipl {
  prolog: { query(goal: string, bindings?: Record<string, unknown>): { once(): SwiResult } }
}

const SWI_PRELOADS = ['lists', 'apply', 'aggregate', 'clpfd']

/** The loader, required once: after a first start its module.exports is no longer the factory. */
let factory: ((o: object) => Promise<Swipl>) | undefined
const swiplFactory = () => {
  factory ??= createRequire(join(SWIPL_DIR, 'x.js'))(join(SWIPL_DIR, 'swipl-web.js')) as (o: object) => Promise<Swipl>
  return factory
}

const swipl: EngineKind = {
  name: 'swipl-wasm',
  npm: 'swipl-wasm',
  packageDir: join(root, 'node_modules', 'swipl-wasm'),
  runtimeFiles: ['swipl-web.js', 'swipl-web.wasm', 'swipl-web.data'].map((f) => join(SWIPL_DIR, f)),
  async start() {
    const s = await swiplFactory()({ arguments: ['-q'], locateFile: (f: string) => join(SWIPL_DIR, f), print() {}, printErr() {} })
    const q = (goal: string, bindings?: Record<string, unknown>) => s.prolog.query(goal, bindings).once()
    const preloads = split(SWI_PRELOADS, (lib) => q(`use_module(library(${lib}))`).success === true)
    const text = (v: unknown) => (typeof v === 'object' && v !== null && 'v' in v ? String(v.v) : String(v))
    return {
      preloads,
      version: `SWI-Prolog ${text(q("current_prolog_flag(version_data, swi(A, B, C, _)), format(atom(V), '~w.~w.~w', [A, B, C])").V)}`,
      async once(goal) {
        const r = q(goal)
        return r.success ? { ok: true } : { ok: false, why: r.error ? quiet(String(r.message)) : 'failed' }
      },
      async readAll(code) {
        const r = q(`open_string(Text, S), ${READ_LOOP}, close(S), (Last == ok -> Msg = ok ; term_string(Last, Msg))`, {
          Text: withPeriod(code),
        })
        if (!r.success) throw new Error(`swipl read loop: ${r.message}`)
        const msg = text(r.Msg)
        return { clauses: Number(r.N), ...(msg !== 'ok' && { error: quiet(msg) }) }
      },
    }
  },
  child: `
const t0 = performance.now()
const { createRequire } = await import('node:module')
const dir = ${JSON.stringify(SWIPL_DIR)}
const factory = createRequire(dir + '/x.js')(dir + '/swipl-web.js')
const s = await factory({ arguments: ['-q'], locateFile: (f) => dir + '/' + f, print() {}, printErr() {} })
const ok = s.prolog.query('true').once().success
const ready = performance.now() - t0
for (const l of ${JSON.stringify(SWI_PRELOADS)}) s.prolog.query('use_module(library(' + l + '))').once()
const ok2 = s.prolog.query('X #= 3+4').once().success
console.log(JSON.stringify({ ready, preloaded: performance.now() - t0, ok: ok && ok2 }))`,
}

// Trealla (trealla-js): one bundled file with the WebAssembly inside; clpz is its CLP(FD) library.
interface TreallaAnswer {
  status: 'success' | 'failure' | 'error'
  answer?: Record<string, unknown>
  error?: unknown
  stdout?: string
}
interface TreallaProlog {
  queryOnce(goal: string, options?: { encode?: { atoms?: 'string' | 'object' } }): Promise<TreallaAnswer>
  writeScratchFile(code: string): Promise<string>
}
interface TreallaModule {
  load(): Promise<void>
  Prolog: new (options?: { quiet?: boolean }) => TreallaProlog
}

const TREALLA_PRELOADS = ['lists', 'apply', 'aggregate', 'clpz']
const treallaFile = join(MODULES, 'trealla', 'trealla.js')

const trealla: EngineKind = {
  name: 'trealla',
  npm: 'trealla',
  packageDir: join(MODULES, 'trealla'),
  runtimeFiles: [treallaFile],
  async start() {
    const t = (await import(pathToFileURL(treallaFile).href)) as TreallaModule
    await t.load()
    const pl = new t.Prolog({ quiet: true })
    const loaded: boolean[] = []
    for (const lib of TREALLA_PRELOADS) loaded.push((await pl.queryOnce(`use_module(library(${lib}))`)).status === 'success')
    const preloads = split(TREALLA_PRELOADS, (_, i) => loaded[i]!)
    const why = (a: TreallaAnswer) => (a.status === 'error' ? quiet(JSON.stringify(a.error)) : quiet(a.stdout || 'failed'))
    return {
      preloads,
      version: 'Trealla Prolog',
      async once(goal) {
        const a = await pl.queryOnce(goal)
        return a.status === 'success' ? { ok: true } : { ok: false, why: why(a) }
      },
      async readAll(code) {
        const file = await pl.writeScratchFile(withPeriod(code))
        const a = await pl.queryOnce(
          `open('${file}', read, S), ${READ_LOOP}, close(S), (Last == ok -> Msg = ok ; term_to_atom(Last, Msg))`,
          { encode: { atoms: 'string' } },
        )
        if (a.status !== 'success') throw new Error(`trealla read loop: ${why(a)}`)
        const msg = String(a.answer?.Msg)
        return { clauses: Number(a.answer?.N), ...(msg !== 'ok' && { error: quiet(msg) }) }
      },
    }
  },
  child: `
const t0 = performance.now()
const t = await import(${JSON.stringify(pathToFileURL(treallaFile).href)})
await t.load()
const pl = new t.Prolog({ quiet: true })
const ok = (await pl.queryOnce('true')).status === 'success'
const ready = performance.now() - t0
for (const l of ${JSON.stringify(TREALLA_PRELOADS)}) await pl.queryOnce('use_module(library(' + l + '))')
const ok2 = (await pl.queryOnce('X #= 3+4')).status === 'success'
console.log(JSON.stringify({ ready, preloaded: performance.now() - t0, ok: ok && ok2 }))`,
}

// Tau Prolog: plain JavaScript; its libraries are JavaScript modules that a program loads with use_module.
interface TauTerm {
  toString(): string
}
interface TauAnswer {
  lookup(name: string): TauTerm | null
}
interface TauSession {
  file_system: unknown
  consult(text: string, callbacks: { success(): void; error(e: TauTerm): void }): void
  query(goal: string, callbacks: { success(): void; error(e: TauTerm): void }): void
  answer(callbacks: { success(a: TauAnswer): void; fail(): void; error(e: TauTerm): void; limit(): void }): void
}
interface Tau {
  create(limit?: number): TauSession
  format_answer(a: unknown): string
  type: { File: new (name: string, type: string, parent: null, text: string) => unknown }
}

const TAU_MODULES = ['lists', 'format', 'charsio']
const tauDir = join(MODULES, 'tau-prolog')

/** Tau loads libraries by directives only, so a goal `use_module(L)` is consulted as `:- use_module(L).` */
function tauOnce(pl: Tau, s: TauSession, goal: string): Promise<Outcome & { answer?: TauAnswer }> {
  return new Promise((resolve) => {
    const failed = (e: TauTerm) => resolve({ ok: false, why: quiet(pl.format_answer(e)) })
    if (goal.startsWith('use_module(')) {
      s.consult(`:- ${goal}.`, { success: () => resolve({ ok: true }), error: failed })
      return
    }
    s.query(`${goal}.`, {
      success: () =>
        s.answer({
          success: (answer) => resolve({ ok: true, answer }),
          fail: () => resolve({ ok: false, why: 'failed' }),
          error: failed,
          limit: () => resolve({ ok: false, why: 'inference limit' }),
        }),
      error: failed,
    })
  })
}

const tau: EngineKind = {
  name: 'tau-prolog',
  npm: 'tau-prolog',
  packageDir: tauDir,
  runtimeFiles: ['core', ...TAU_MODULES].map((m) => join(tauDir, 'modules', `${m}.js`)),
  async start() {
    const req = createRequire(join(tauDir, 'x.js'))
    const pl = req(tauDir) as Tau
    for (const m of TAU_MODULES) (req(join(tauDir, 'modules', `${m}.js`)) as (p: Tau) => void)(pl)
    const s = pl.create(1_000_000)
    const loaded: boolean[] = []
    for (const m of TAU_MODULES) loaded.push((await tauOnce(pl, s, `use_module(library(${m}))`)).ok)
    const preloads = split(TAU_MODULES, (_, i) => loaded[i]!)
    // read_term/3 from a file of tau's own in-memory file system (the browser's; the Node one reads bytes).
    let text = ''
    s.file_system = {
      open: (path: string, type: string, mode: string) =>
        path === '/body.pl' && mode === 'read' ? new pl.type.File('body.pl', type, null, text) : null,
    }
    const pkg = JSON.parse(readFileSync(join(tauDir, 'package.json'), 'utf8')) as { version: string }
    return {
      preloads,
      version: `Tau Prolog ${pkg.version}`,
      once: (goal) => tauOnce(pl, s, goal),
      async readAll(code) {
        text = withPeriod(code)
        const r = await tauOnce(pl, s, `open('/body.pl', read, S), ${READ_LOOP}, close(S)`)
        if (!r.ok || !r.answer) throw new Error(`tau read loop: ${r.ok ? 'no answer' : r.why}`)
        const last = String(r.answer.lookup('Last'))
        return { clauses: Number(String(r.answer.lookup('N'))), ...(last !== 'ok' && { error: quiet(last) }) }
      },
    }
  },
  child: `
const t0 = performance.now()
const { createRequire } = await import('node:module')
const dir = ${JSON.stringify(tauDir)}
const req = createRequire(dir + '/x.js')
const pl = req(dir)
for (const m of ${JSON.stringify(TAU_MODULES)}) req(dir + '/modules/' + m + '.js')(pl)
const s = pl.create(1000000)
const run = (goal) => new Promise((res) => s.query(goal, { success: () => s.answer({ success: () => res(true), fail: () => res(false), error: () => res(false), limit: () => res(false) }), error: () => res(false) }))
const ok = await run('true.')
const ready = performance.now() - t0
await new Promise((res) => s.consult(${JSON.stringify(TAU_MODULES.map((m) => `:- use_module(library(${m})).`).join('\n'))}, { success: res, error: res }))
const ok2 = await run('msort([b, a], L).')
console.log(JSON.stringify({ ready, preloaded: performance.now() - t0, ok: ok && ok2 }))`,
}

const ENGINES = [swipl, trealla, tau]

// ---------------------------------------------------------------------------------------------------------------
// Measuring.

/** The package directory and, recursively, the dependencies it declares (found beside it in node_modules). */
function installedBytes(packageDir: string): { bytes: number; packages: string[] } {
  const modules = join(packageDir, '..')
  const seen = new Set<string>()
  const visit = (name: string) => {
    if (seen.has(name) || !existsSync(join(modules, name))) return
    seen.add(name)
    const pkg = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep)
  }
  visit(packageDir.slice(modules.length + 1))
  return { bytes: [...seen].reduce((sum, name) => sum + dirBytes(join(modules, name)), 0), packages: [...seen] }
}

function versionOf(packageDir: string): string {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version
}

function startTimes(kind: EngineKind): { ready: number[]; preloaded: number[] } {
  const ready: number[] = []
  const preloaded: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', kind.child], { encoding: 'utf8' })
    const line = r.stdout.trim().split('\n').pop() ?? ''
    let m: { ready: number; preloaded: number; ok: boolean }
    try {
      m = JSON.parse(line)
    } catch {
      throw new Error(`${kind.name} start: ${r.stderr || r.stdout}`)
    }
    if (!m.ok) throw new Error(`${kind.name} start: the engine did not answer`)
    ready.push(m.ready)
    preloaded.push(m.preloaded)
  }
  return { ready, preloaded }
}

const MB = (b: number) => `${(b / 1e6).toFixed(2)} MB`
const ms = (x: number) => `${x.toFixed(0)} ms`

const { bodies, unreadable } = prologBodies()
const files = new Set(bodies.map((b) => b.file))
console.log(`TEA corpus: ${bodies.length} Prolog bodies in ${files.size} files`)
console.log(
  `  (${bodies.filter((b) => b.kind === 'rules').length} validation_constraints rules; YAML not parsed: ${unreadable.join(', ')})`,
)
console.log(`Node ${process.version}; extra engines from ${MODULES}\n`)

interface Result {
  kind: EngineKind
  version: string
  preloads: Engine['preloads']
  readable: number
  readErrors: Array<{ body: Body; clauses: number; error: string }>
  features: Outcome[]
  ready: number[]
  preloaded: number[]
  installed: { bytes: number; packages: string[] }
  runtime: number
}

const results: Result[] = []
for (const kind of ENGINES) {
  // One fresh engine per engine for reading (nothing in a body is run, so bodies cannot affect each other) and
  // another for the feature probes.
  const reader = await kind.start()
  const readErrors: Result['readErrors'] = []
  for (const body of bodies) {
    const r = await reader.readAll(body.code)
    if (r.error !== undefined) readErrors.push({ body, clauses: r.clauses, error: r.error })
  }
  const prober = await kind.start()
  const features: Outcome[] = []
  for (const f of FEATURES) {
    let outcome: Outcome = { ok: true }
    for (const step of f.steps) {
      outcome = await prober.once(step)
      if (!outcome.ok) break
    }
    features.push(outcome)
  }
  const { ready, preloaded } = startTimes(kind)
  results.push({
    kind,
    version: `${kind.npm}@${versionOf(kind.packageDir)} (${reader.version})`,
    preloads: reader.preloads,
    readable: bodies.length - readErrors.length,
    readErrors,
    features,
    ready,
    preloaded,
    installed: installedBytes(kind.packageDir),
    runtime: kind.runtimeFiles.reduce((sum, f) => sum + statSync(f).size, 0),
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Report (Markdown, for docs/prolog-engines.md).

const head = `| | ${results.map((r) => r.kind.name).join(' | ')} |`
const rule = `|---|${results.map(() => '---').join('|')}|`
const row = (label: string, cells: string[]) => `| ${label} | ${cells.join(' | ')} |`

const usesOf = FEATURES.map((f) => bodies.filter((b) => f.uses.test(b.code)))
/** Bodies that read and use none of the features the engine failed: at most these could run on it. */
const clean = (r: Result) =>
  bodies.filter((b) => !r.readErrors.some((e) => e.body === b) && !FEATURES.some((f, i) => !r.features[i]!.ok && f.uses.test(b.code)))
    .length

console.log('### Engines\n')
console.log(head)
console.log(rule)
console.log(
  row(
    'version',
    results.map((r) => r.version),
  ),
)
console.log(
  row(
    'libraries loaded first (TEA preloads lists, apply, aggregate, clpfd)',
    results.map((r) => r.preloads.loaded.join(', ') + (r.preloads.missing.length ? `; not found: ${r.preloads.missing.join(', ')}` : '')),
  ),
)
console.log(
  row(
    `bodies fully read (of ${bodies.length})`,
    results.map((r) => String(r.readable)),
  ),
)
console.log(
  row(
    'probed features missing',
    results.map((r) => `${r.features.filter((f) => !f.ok).length} of ${FEATURES.length}`),
  ),
)
console.log(
  row(
    'bodies that read and use no missing feature',
    results.map((r) => String(clean(r))),
  ),
)
console.log(
  row(
    `start to first answer, median of ${ROUNDS} (range)`,
    results.map((r) => `${ms(median(r.ready))} (${ms(Math.min(...r.ready))}–${ms(Math.max(...r.ready))})`),
  ),
)
console.log(
  row(
    'start + TEA preloads, median (range)',
    results.map((r) => `${ms(median(r.preloaded))} (${ms(Math.min(...r.preloaded))}–${ms(Math.max(...r.preloaded))})`),
  ),
)
console.log(
  row(
    'installed (package + its dependencies)',
    results.map((r) => `${MB(r.installed.bytes)} (${r.installed.packages.join(', ')})`),
  ),
)
console.log(
  row(
    'files needed at run time',
    results.map((r) => `${MB(r.runtime)} (${r.kind.runtimeFiles.map((f) => f.split('/').pop()).join(', ')})`),
  ),
)

console.log('\n### Features (probe goals run after the preloads; bodies = corpus bodies whose text uses the feature)\n')
console.log(`| feature | bodies | ${results.map((r) => r.kind.name).join(' | ')} |`)
console.log(`|---|---|${results.map(() => '---').join('|')}|`)
FEATURES.forEach((f, i) => {
  console.log(`| ${f.name} | ${usesOf[i]!.length} | ${results.map((r) => (r.features[i]!.ok ? 'yes' : 'no')).join(' | ')} |`)
})

console.log('\n### Why a probe failed\n')
for (const r of results)
  FEATURES.forEach((f, i) => {
    const o = r.features[i]!
    if (!o.ok) console.log(`- ${r.kind.name}, ${f.name}: ${o.why.replaceAll('|', '\\|')}`)
  })

console.log('\n### Bodies not fully read\n')
for (const r of results) {
  console.log(`- ${r.kind.name}: ${r.readErrors.length}`)
  for (const e of r.readErrors)
    console.log(
      `  - ${e.body.file.replace(/^agents\//, '')} ${e.body.where}: after ${e.clauses} clauses, ${e.error.replaceAll('|', '\\|')}`,
    )
}
