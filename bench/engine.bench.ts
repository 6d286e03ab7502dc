/**
 * Engine benchmark (issue 2 "Measured", SPEC §4): overhead per node on linear agents of 200 and 2,000 nodes, for
 * action nodes without and with one template, `run:` nodes and the core json.transform, with checkpoints off
 * (no-op store writes; the memory store) and on (LMDB, fsynced), against the same linear graph on LangGraph.js
 * in the same run, interleaved round by round; then the checkpoint bytes of a 2,000-node LMDB run.
 *
 * Run: npx tsx bench/engine.bench.ts [--rounds N] [--lg-2000-rounds N] [--lg-memory-2000-rounds N]
 *                                    [--no-langgraph] [--source]
 * Prints markdown on stdout (progress on stderr).
 *
 * tea and LangGraph each run in their own child process (engine-worker.ts says why); this process only drives
 * the rounds, waits for a quiet machine before each, and records the load of other processes during it.
 * By default the benchmark first bundles itself with esbuild (minified, packages external: src/ compiled as
 * build.mjs compiles it) and runs that bundle with plain node, because tsx compiles with esbuild's keepNames,
 * which wraps every closure the engine creates per node in a `__name()` call that the shipped bundle does not
 * have. `--source` runs the TypeScript through tsx instead.
 *
 * µs per node is reported two ways: the whole run's wall time / nodes (includes the fixed cost of a run: the
 * first and last snapshot, the run record, for LMDB their fsyncs), and the slope (T(2,000) − T(200)) / 1,800,
 * which cancels that fixed cost. Both are medians over rounds; the slope is the median of per-round slopes.
 */

import { fork, spawnSync, type ChildProcess } from 'node:child_process'
import { cpus } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { KIND_LABELS } from './engine-agents.ts'
import { renderReport, type Samples } from './engine-report.ts'
import { foreignLoad, waitForQuiet } from './engine-stats.ts'
import { serve, type Reply, type Request, type Role } from './engine-worker.ts'

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const ROUNDS = flag('--rounds', 9)
// LangGraph at 2,000 nodes takes seconds per run (over ten with MemorySaver: its checkpoints grow with every
// step), so it runs in the first rounds only, to keep the benchmark near two minutes.
const LG_2000 = { none: Math.min(flag('--lg-2000-rounds', 3), ROUNDS), memory: Math.min(flag('--lg-memory-2000-rounds', 1), ROUNDS) }
const WITH_LANGGRAPH = !process.argv.includes('--no-langgraph')

const log = (msg: string): void => void process.stderr.write(`${msg}\n`)

interface Child {
  call(req: Request): Promise<Reply>
  proc: ChildProcess
}

/** Forks this same file (bundle or source; fork keeps tsx's loader flags) as a measuring child. */
function spawnChild(role: Role): Promise<Child> {
  const proc = fork(fileURLToPath(import.meta.url), process.argv.slice(2), { env: { ...process.env, TEA_BENCH_ROLE: role } })
  let pending: { resolve(r: Reply): void; reject(e: Error): void } | undefined
  const settle = (): typeof pending => {
    const p = pending
    pending = undefined
    return p
  }
  proc.on('message', (r: Reply) => {
    const p = settle()
    if (r.type === 'error') p?.reject(new Error(`${role} child: ${r.message}`))
    else p?.resolve(r)
  })
  proc.on('exit', (code) => settle()?.reject(new Error(`${role} child exited with code ${code}`)))
  const next = (): Promise<Reply> => new Promise((resolve, reject) => void (pending = { resolve, reject }))
  return next().then(() => ({
    proc,
    call(req) {
      const reply = next()
      proc.send(req)
      return reply
    },
  }))
}

async function main(): Promise<void> {
  const started = performance.now()
  const tea = await spawnChild('tea')
  const lg = WITH_LANGGRAPH ? await spawnChild('lg') : undefined
  const children = [tea, ...(lg ? [lg] : [])]
  log('warming up')
  const teaInfo = (await tea.call({ type: 'warm' })).info ?? []
  const lgInfo = lg ? ((await lg.call({ type: 'warm' })).info ?? []) : []

  const samples: Samples = new Map()
  const cpu: Samples = new Map()
  const add = (to: Samples, k: string, ms: number): void => void (to.get(k) ?? to.set(k, []).get(k)!).push(ms)
  const foreign: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const quiet = await waitForQuiet()
    const w = foreignLoad()
    let childCpu = 0
    for (const child of children) {
      const reply = await child.call({ type: 'round', round: r, lg2000Rounds: LG_2000 })
      childCpu += reply.cpuMs
      for (const [k, ms, cpuMs] of reply.samples ?? []) {
        add(samples, k, ms)
        add(cpu, k, cpuMs)
      }
    }
    foreign.push(w.stop(childCpu))
    log(`round ${r + 1}/${ROUNDS}: foreign load before ${quiet.toFixed(2)}, during ${foreign[r]!.toFixed(2)} cores`)
  }
  log('counting checkpoint bytes')
  const bytes = (await tea.call({ type: 'bytes' })).bytes ?? []
  for (const child of children) child.proc.send({ type: 'exit' })

  const model = cpus()[0]?.model ?? 'unknown'
  process.stdout.write(
    renderReport({
      rounds: ROUNDS,
      lg2000Rounds: LG_2000,
      bundled: process.env.TEA_BENCH_BUNDLED === '1',
      withLangGraph: WITH_LANGGRAPH,
      samples,
      cpu,
      load: teaInfo,
      lgCompile: lgInfo.map(([n, ms]) => [Number(n), ms]),
      bytes: new Map(bytes),
      foreign,
      machine: `Node ${process.version}, ${cpus().length} cores (${model})`,
      seconds: (performance.now() - started) / 1000,
      labels: KIND_LABELS,
    }),
  )
}

/** Bundles this file (see the header) and runs the bundle; returns its exit code. */
async function runBundled(): Promise<number> {
  const { build } = await import('esbuild')
  const here = fileURLToPath(import.meta.url)
  const outfile = join(dirname(here), '.out', 'engine.bench.mjs')
  await build({
    entryPoints: [here],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    packages: 'external',
    logLevel: 'warning',
  })
  const r = spawnSync(process.execPath, [outfile, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, TEA_BENCH_BUNDLED: '1' },
  })
  return r.status ?? 1
}

function start(): Promise<number> {
  const role = process.env.TEA_BENCH_ROLE as Role | undefined
  if (role) return serve(role).then(() => 0)
  if (process.argv.includes('--source') || process.env.TEA_BENCH_BUNDLED === '1') return main().then(() => 0)
  return runBundled()
}

start().then(
  (code) => void (process.exitCode = code),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
