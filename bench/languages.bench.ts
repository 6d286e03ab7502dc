/**
 * The costs of run: code in other languages (issue 11; issue 13 for Prolog's validation query):
 *
 * 1. In this process (x64): starting SWI-Prolog (WebAssembly compile + its library + tea's glue), one run of a
 *    small Prolog `run:` body (state in, a rule, return out), and validate.extraction's query over 100 facts.
 * 2. Through the built single executables, as users run them: an agent of 21 `run:` nodes in one language
 *    (JavaScript for comparison, Prolog, Lua, Python); the first node pays for a pool worker and the engine, the
 *    others show the per-node cost (node_end `ms` from `--stream`); peak RSS from /usr/bin/time. On linux-x64
 *    natively, and on linux-arm64 under qemu when it is installed (informational: emulation, not a Pi).
 * 3. Bytes: what each feature adds to the bundle (its modules, from esbuild's metafile) and beside it (the engine).
 *
 *   node build.mjs --target linux-x64 && npm run sea -- --target linux-x64 --target linux-arm64
 *   npx tsx bench/languages.bench.ts [--rounds 5]
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// @ts-expect-error plain JavaScript build script without type declarations
import { buildTarget, engineFiles } from '../build.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { runnerFor } from '../scripts/build/qemu.mjs'
import { PrologEngine } from '../src/prolog/engine.ts'
import { prologFiles } from '../src/prolog/files.ts'

const ROUNDS = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 5
const root = join(import.meta.dirname, '..')
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 0)} ms`

// 1. In process.
const starts: number[] = []
let engine: PrologEngine | undefined
for (let i = 0; i < ROUNDS; i++) {
  const t = performance.now()
  engine = await PrologEngine.start(prologFiles())
  starts.push(performance.now() - t)
}
const body = 'double(X, Y) :- Y is X * 2.\nstate(value, V), double(V, D), return(result, D).'
const runs: number[] = []
for (let round = 0; round < ROUNDS; round++) {
  const n = 500
  const t = performance.now()
  for (let i = 0; i < n; i++) engine!.run(body, { value: i, text: 'some state that comes along', list: [1, 2, 3] })
  runs.push((performance.now() - t) / n)
}
const facts = Array.from({ length: 100 }, (_, i) => ['entity', `person ${i}`, i % 7 ? 'person' : 'org', (i % 10) / 10])
const rules = 'validation_error(low_confidence, E) :- entity(E, _, C), C < 0.2.\nvalidation_error(org, E) :- entity(E, org, _).'
const queries: number[] = []
let found = 0
for (let round = 0; round < ROUNDS * 10; round++) {
  const t = performance.now()
  const o = engine!.query(rules, facts, 'validation_error(Type, Context)', 1000)
  queries.push(performance.now() - t)
  found = o.kind === 'solutions' ? o.rows.length : -1
}
console.log(`In process (x64, Node ${process.version}), medians of ${ROUNDS}:`)
console.log(`- engine start: ${ms(median(starts))}`)
console.log(`- one run of a small run: body (state in, a rule, return out): ${ms(median(runs))}`)
console.log(`- validation query over 100 facts (consult 2 rules, ${found} solutions): ${ms(median(queries))} (median of ${ROUNDS * 10})`)

// 2. Through the executables, one language at a time.
const NODES = 21
const dir = mkdtempSync(join(tmpdir(), 'tea-languages-bench-'))
const BODIES = {
  javascript: 'language: javascript\n    run: "return { n: state.n + 1 }"',
  prolog: 'language: prolog\n    run: "state(n, N), M is N + 1, return(n, M)."',
  lua: 'language: lua\n    run: "return { n = state.n + 1 }"',
  python: 'language: python\n    run: "return {\\"n\\": state[\\"n\\"] + 1}"',
} as const
const emulated = (arch: string): string[] | null => {
  try {
    const prefix = runnerFor(arch) as string[]
    return prefix.length && spawnSync(prefix[0]!, ['--version']).status !== 0 ? null : prefix
  } catch {
    return null
  }
}
const rows: string[] = []
for (const [target, runner] of [
  ['linux-x64', emulated('x64')],
  ['linux-arm64', emulated('arm64')],
] as const) {
  const exe = join(root, 'dist', target, 'tea')
  if (runner === null || !existsSync(exe)) {
    console.log(`\n${target}: skipped (${runner === null ? 'no qemu' : `no ${exe}: npm run sea -- --target ${target}`})`)
    continue
  }
  for (const [language, body] of Object.entries(BODIES)) {
    const agent = join(dir, `${language}.yaml`)
    writeFileSync(
      agent,
      `name: ${language}-bench\nnodes:\n${Array.from({ length: NODES }, (_, i) => `  - name: p${i}\n    ${body}\n`).join('')}`,
    )
    const firsts: number[] = []
    const rest: number[] = []
    const walls: number[] = []
    const rss: number[] = []
    for (let round = 0; round < (runner.length ? Math.min(ROUNDS, 3) : ROUNDS); round++) {
      const args = ['run', agent, '--input', '{"n": 0}', '--data-dir', join(dir, `data-${target}-${language}-${round}`), '--stream']
      const [cmd, ...prefix] = ['/usr/bin/time', '-f', '%M', ...runner, exe]
      const t = performance.now()
      const r = spawnSync(cmd!, [...prefix, ...args], { encoding: 'utf8', env: { ...process.env, TEA_CACHE_DIR: join(dir, 'cache') } })
      walls.push(performance.now() - t)
      if (r.status !== 0) throw new Error(`${target} ${language}: exit ${r.status}\n${r.stderr}`)
      rss.push(Number(r.stderr.trim().split('\n').at(-1)) / 1024)
      const ends = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((e) => e.type === 'node_end')
        .map((e) => e.ms as number)
      if (ends.length !== NODES) throw new Error(`${target} ${language}: ${ends.length} nodes ended`)
      firsts.push(ends[0]!)
      rest.push(median(ends.slice(1)))
    }
    rows.push(
      `| ${target}${runner.length ? ' (qemu)' : ''} | ${language} | ${ms(median(firsts))} | ${ms(median(rest))} | ${ms(median(walls))} | ${median(rss).toFixed(0)} MB |`,
    )
  }
}
// validate.extraction's Prolog layer over 100 entities through each executable: the first validation starts the
// engine; the second is the query alone (consulting the rules, asserting 100 facts, collecting violations).
const validation = join(dir, 'validation.yaml')
writeFileSync(
  validation,
  `name: validation-bench
validation_constraints:
  rules: |
    validation_error(low_confidence, E) :- entity(E, _, C), C < 0.2.
    validation_error(org, E) :- entity(E, org, _).
extraction_schema:
  confidence_tracking: true
nodes:
  - name: first
    uses: validate.extraction
    output: first
  - name: second
    uses: validate.extraction
    output: second
`,
)
const entities = Array.from({ length: 100 }, (_, i) => ({ name: `person ${i}`, type: i % 7 ? 'person' : 'org', confidence: (i % 10) / 10 }))
for (const [target, runner] of [
  ['linux-x64', emulated('x64')],
  ['linux-arm64', emulated('arm64')],
] as const) {
  const exe = join(root, 'dist', target, 'tea')
  if (runner === null || !existsSync(exe)) continue
  const cold: number[] = []
  const warm: number[] = []
  for (let round = 0; round < (runner.length ? Math.min(ROUNDS, 3) : ROUNDS); round++) {
    const input = JSON.stringify({ entities, relationships: [] })
    const args = ['run', validation, '--input', input, '--data-dir', join(dir, `vdata-${target}-${round}`), '--stream']
    const [cmd, ...prefix] = [...runner, exe]
    const r = spawnSync(cmd!, [...prefix, ...args], { encoding: 'utf8', env: { ...process.env, TEA_CACHE_DIR: join(dir, 'cache') } })
    if (r.status !== 0) throw new Error(`${target} validation: exit ${r.status}\n${r.stderr}`)
    const ends = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === 'node_end')
    cold.push(ends[0].ms)
    warm.push(ends[1].ms)
  }
  rows.push(
    `| ${target}${runner.length ? ' (qemu)' : ''} | validate.extraction, 100 facts | ${ms(median(cold))} | ${ms(median(warm))} | | |`,
  )
}

console.log(`\nThrough the executables: an agent of ${NODES} run: nodes in one language, medians of ${ROUNDS} runs (3 under qemu).`)
console.log('The first node pays for a pool worker and the engine; later nodes show the per-node cost. Peak RSS is the')
console.log('whole process tree as /usr/bin/time reports it (max RSS of the largest process).\n')
console.log('| executable | language | first node | each later node | whole command | peak RSS |')
console.log('| --- | --- | --- | --- | --- | --- |')
for (const row of rows) console.log(row)
rmSync(dir, { recursive: true, force: true })

// 3. Bytes.
const built = await buildTarget('linux-x64', {
  quiet: true,
  metafile: true,
  outfile: join(tmpdir(), 'tea-languages-bench-bundle', 'tea.cjs'),
})
const out = Object.values(built.metafile.outputs)[0] as { inputs: Record<string, { bytesInOutput: number }> }
console.log('')
for (const feature of ['prolog', 'lua', 'python']) {
  const featureBytes = Object.entries(out.inputs)
    .filter(([f]) => f.startsWith(`src/${feature}/`))
    .reduce((n, [, i]) => n + i.bytesInOutput, 0)
  const engine = Object.entries(engineFiles(built.target) as Record<string, string>).filter(([name]) => name.startsWith(`${feature}/`))
  const engineBytes = engine.reduce((n, [, f]) => n + statSync(f).size, 0)
  console.log(
    `${feature}: ${(featureBytes / 1024).toFixed(1)} KB of bundle; engine files ${(engineBytes / 1e6).toFixed(2)} MB (${engine.map(([n]) => n.split('/')[1]).join(', ')})`,
  )
}
rmSync(join(tmpdir(), 'tea-languages-bench-bundle'), { recursive: true, force: true })
