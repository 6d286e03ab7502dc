/**
 * Engine benchmark (issue 2 "Measured", SPEC §4): overhead per node on linear agents of 200 and 2,000 nodes, for
 * action nodes without and with one template, `run:` nodes and the core json.transform, with checkpoints off
 * (no-op store writes; the memory store) and on (LMDB, fsynced), against the same linear graph on LangGraph.js
 * measured in the same process, interleaved round by round; then the checkpoint bytes of a 2,000-node LMDB run.
 *
 * Run: npx tsx bench/engine.bench.ts [--rounds N] [--lg-2000-rounds N] [--lg-memory-2000-rounds N] [--no-langgraph]
 *                                    [--source]
 * Prints markdown on stdout (progress on stderr).
 *
 * By default the benchmark first bundles itself with esbuild (minified, packages external: src/ compiled as
 * build.mjs compiles it) and runs that bundle with plain node, because tsx compiles with esbuild's keepNames,
 * which wraps every closure the engine creates per node in a `__name()` call that the shipped bundle does not
 * have. `--source` runs the TypeScript through tsx instead.
 *
 * µs per node is reported two ways: the whole run's wall time / nodes (includes the fixed cost of a run: the
 * first and last snapshot, the run record, for LMDB their fsyncs), and the slope (T(2,000) − T(200)) / 1,800,
 * which cancels that fixed cost. Both are medians over rounds; the slope is the median of per-round slopes.
 */

import { spawnSync } from 'node:child_process'
import { cpus } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchRegistry, KIND_LABELS, KINDS, linearAgentYaml, type Kind } from './engine-agents.ts'
import { countCheckpointBytes, openStore, prepare, timedRun, type Prepared, type StoreKind } from './engine-run.ts'
import { foreignLoad, waitForQuiet } from './engine-stats.ts'
import { buildLinearGraph, type LangGraphMode, type LinearGraph } from './langgraph-linear.ts'
import { renderReport, type Samples } from './engine-report.ts'

const SIZES = [200, 2000] as const
const STORES: StoreKind[] = ['none', 'memory', 'lmdb']
const LG_MODES: LangGraphMode[] = ['none', 'memory']

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const ROUNDS = flag('--rounds', 9)
// LangGraph at 2,000 nodes takes seconds per run (tens of seconds with MemorySaver: its checkpoints grow with
// every step), so it runs in the first rounds only, to keep the benchmark near two minutes.
const LG_2000_ROUNDS = flag('--lg-2000-rounds', 3)
const LG_MEMORY_2000_ROUNDS = flag('--lg-memory-2000-rounds', 1)
const WITH_LANGGRAPH = !process.argv.includes('--no-langgraph')

const key = (...parts: Array<string | number>): string => parts.join('/')
const log = (msg: string): void => void process.stderr.write(`${msg}\n`)

async function teaOnce(p: Prepared, store: StoreKind, runId: string): Promise<{ ms: number; cpuMs: number }> {
  const opened = openStore(store)
  try {
    const { ms, cpuMs, state } = await timedRun(p, opened.store, runId)
    if (p.spec.name.startsWith('linear-run-') && state.i !== p.spec.nodes.length) throw new Error(`run: agent ended with i=${String(state.i)}`)
    return { ms, cpuMs }
  } finally {
    await opened.close()
  }
}

async function lgOnce(g: LinearGraph, n: number, mode: LangGraphMode, run: number): Promise<number> {
  const { ms, i } = await g.invoke(mode, run)
  if (i !== n) throw new Error(`LangGraph ${n}/${mode} ended with i=${i}`)
  return ms
}

async function main(): Promise<void> {
  const started = performance.now()
  const registry = benchRegistry()
  const agents = new Map<string, Prepared>()
  for (const kind of KINDS) for (const n of SIZES) agents.set(key(kind, n), prepare(linearAgentYaml(kind, n), registry))
  const graphs = new Map<number, LinearGraph>()
  if (WITH_LANGGRAPH) for (const n of SIZES) graphs.set(n, await buildLinearGraph(n))

  log('warming up')
  for (let w = 0; w < 3; w++) {
    for (const [k, p] of agents) for (const s of STORES) await teaOnce(p, s, `warm-${w}-${k}-${s}`)
  }
  if (WITH_LANGGRAPH) {
    await lgOnce(graphs.get(200)!, 200, 'none', -1)
    await lgOnce(graphs.get(200)!, 200, 'memory', -1)
    await lgOnce(graphs.get(2000)!, 2000, 'none', -1)
  }

  const samples: Samples = new Map()
  const cpu: Samples = new Map()
  const add = (to: Samples, k: string, ms: number): void => void (to.get(k) ?? to.set(k, []).get(k)!).push(ms)
  const foreign: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const quiet = await waitForQuiet()
    const w = foreignLoad()
    for (const n of SIZES) {
      for (const kind of KINDS) {
        for (const s of STORES) {
          const t = await teaOnce(agents.get(key(kind, n))!, s, `r${r}`)
          add(samples, key('tea', kind, s, n), t.ms)
          add(cpu, key('tea', kind, s, n), t.cpuMs)
        }
      }
      if (!WITH_LANGGRAPH) continue
      for (const mode of LG_MODES) {
        if (n === 2000 && r >= (mode === 'memory' ? LG_MEMORY_2000_ROUNDS : LG_2000_ROUNDS)) continue
        add(samples, key('lg', mode, n), await lgOnce(graphs.get(n)!, n, mode, r))
      }
    }
    foreign.push(w.stop())
    log(`round ${r + 1}/${ROUNDS}: foreign load before ${quiet.toFixed(2)}, during ${foreign[r]!.toFixed(2)} cores`)
  }

  log('counting checkpoint bytes')
  const bytes = new Map<Kind, Awaited<ReturnType<typeof countCheckpointBytes>>>()
  for (const kind of KINDS) bytes.set(kind, await countCheckpointBytes(agents.get(key(kind, 2000))!))

  const model = cpus()[0]?.model ?? 'unknown'
  process.stdout.write(
    renderReport({
      rounds: ROUNDS,
      lg2000Rounds: { none: Math.min(LG_2000_ROUNDS, ROUNDS), memory: Math.min(LG_MEMORY_2000_ROUNDS, ROUNDS) },
      bundled: process.env.TEA_BENCH_BUNDLED === '1',
      withLangGraph: WITH_LANGGRAPH,
      samples,
      cpu,
      agents,
      graphs,
      bytes,
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
  await build({ entryPoints: [here], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', minify: true, packages: 'external', logLevel: 'warning' })
  const r = spawnSync(process.execPath, [outfile, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, TEA_BENCH_BUNDLED: '1' } })
  return r.status ?? 1
}

const start = process.argv.includes('--source') || process.env.TEA_BENCH_BUNDLED === '1' ? main().then(() => 0) : runBundled()
start.then(
  (code) => void (process.exitCode = code),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
