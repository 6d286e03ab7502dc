/**
 * The Prolog feature's costs (issue 11 part 3, issue 13):
 *
 * 1. In this process (x64): starting SWI-Prolog (WebAssembly compile + its library + tea's glue), one run of a
 *    small `run:` body (state in, a rule, return out), and validate.extraction's query over 100 facts.
 * 2. Through the built single executables, as users run them: an agent of 21 Prolog nodes; the first node pays
 *    for a pool worker and the engine, the others show the per-node cost (node_end `ms` from `--stream`). On
 *    linux-x64 natively, and on linux-arm64 under qemu when it is installed (informational: emulation, not a Pi).
 * 3. Bytes: what the feature adds to the bundle (its modules, from esbuild's metafile) and beside it (the engine).
 *
 *   node build.mjs --target linux-x64 && npm run sea -- --target linux-x64 --target linux-arm64
 *   npx tsx bench/prolog.bench.ts [--rounds 5]
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

// 2. Through the executables.
const NODES = 21
const dir = mkdtempSync(join(tmpdir(), 'tea-prolog-bench-'))
const agent = join(dir, 'agent.yaml')
writeFileSync(
  agent,
  `name: prolog-bench\nnodes:\n${Array.from(
    { length: NODES },
    (_, i) => `  - name: p${i}\n    language: prolog\n    run: "state(n, N), M is N + 1, return(n, M)."\n`,
  ).join('')}`,
)
const emulated = (arch: string): string[] | null => {
  try {
    const prefix = runnerFor(arch) as string[]
    return prefix.length && spawnSync(prefix[0]!, ['--version']).status !== 0 ? null : prefix
  } catch {
    return null
  }
}
for (const [target, runner] of [
  ['linux-x64', emulated('x64')],
  ['linux-arm64', emulated('arm64')],
] as const) {
  const exe = join(root, 'dist', target, 'tea')
  if (runner === null || !existsSync(exe)) {
    console.log(`\n${target}: skipped (${runner === null ? 'no qemu' : `no ${exe}: npm run sea -- --target ${target}`})`)
    continue
  }
  const firsts: number[] = []
  const rest: number[] = []
  const walls: number[] = []
  for (let round = 0; round < (runner.length ? Math.min(ROUNDS, 3) : ROUNDS); round++) {
    const args = ['run', agent, '--input', '{"n": 0}', '--data-dir', join(dir, `data-${target}-${round}`), '--stream']
    const t = performance.now()
    const [cmd, ...prefix] = [...runner, exe]
    const r = spawnSync(cmd!, [...prefix, ...args], { encoding: 'utf8', env: { ...process.env, TEA_CACHE_DIR: join(dir, 'cache') } })
    walls.push(performance.now() - t)
    if (r.status !== 0) throw new Error(`${target}: exit ${r.status}\n${r.stderr}`)
    const ends = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === 'node_end')
      .map((e) => e.ms as number)
    if (ends.length !== NODES) throw new Error(`${target}: ${ends.length} nodes ended`)
    firsts.push(ends[0]!)
    rest.push(median(ends.slice(1)))
  }
  console.log(`\n${target}${runner.length ? ' (under qemu: informational)' : ''}, ${NODES} Prolog nodes, medians of ${firsts.length} runs:`)
  console.log(`- first node (a pool worker starts, then the engine): ${ms(median(firsts))}`)
  console.log(`- each later node (warm engine): ${ms(median(rest))}`)
  console.log(`- whole command: ${ms(median(walls))}`)
}
rmSync(dir, { recursive: true, force: true })

// 3. Bytes.
const built = await buildTarget('linux-x64', { quiet: true, metafile: true, outfile: join(tmpdir(), 'tea-prolog-bench-bundle', 'tea.cjs') })
const out = Object.values(built.metafile.outputs)[0] as { inputs: Record<string, { bytesInOutput: number }> }
const featureBytes = Object.entries(out.inputs)
  .filter(([f]) => f.startsWith('src/prolog/'))
  .reduce((n, [, i]) => n + i.bytesInOutput, 0)
const engineBytes = Object.values(engineFiles(built.target) as Record<string, string>).reduce((n, f) => n + statSync(f).size, 0)
rmSync(join(tmpdir(), 'tea-prolog-bench-bundle'), { recursive: true, force: true })
console.log(
  `\nBytes: the prolog modules add ${(featureBytes / 1024).toFixed(1)} KB to the minified bundle (of ${(built.size / 1024).toFixed(1)} KB);`,
)
console.log(
  `the engine beside it (SEA assets in an executable) is ${(engineBytes / 1e6).toFixed(2)} MB; base64 inside the armv7 main, ${((engineBytes * 4) / 3 / 1e6).toFixed(2)} MB.`,
)
