/**
 * The engine benchmark's markdown report: per-node figures against SPEC §4's bars, the checkpoint cost, the
 * LangGraph.js ratios, load/compile times and checkpoint bytes. Samples are wall ms per run, one per round, in
 * round order, so a 200-node and a 2,000-node sample of the same round pair up for the slope.
 */

import type { Kind } from './engine-agents.ts'
import type { CheckpointBytes, StoreKind } from './engine-run.ts'
import { median } from './engine-stats.ts'

/** Wall ms per run, indexed by round (a key measured in the first rounds only has a shorter array). */
export type Samples = Map<string, number[]>

export interface ReportInput {
  rounds: number
  lg2000Rounds: { none: number; memory: number }
  withLangGraph: boolean
  bundled: boolean
  samples: Samples
  /** CPU ms of this process per tea run, same keys and rounds as `samples`. */
  cpu: Samples
  /** [kind/nodes, load ms, compile ms] per agent. */
  load: Array<[string, number, number]>
  /** [nodes, build + compile ms] per LangGraph graph. */
  lgCompile: Array<[number, number]>
  bytes: Map<Kind, CheckpointBytes>
  /** Foreign load per round, in cores. */
  foreign: number[]
  machine: string
  seconds: number
  labels: Record<Kind, string>
}

const LO = 200
const HI = 2000
/** A round is quiet when other processes used less than this many cores during it (perf-anchors.md §1). */
const QUIET = 0.3

/** Statistics over the chosen rounds; a key with no sample in them falls back to all of its rounds. */
class Stats {
  constructor(
    private readonly s: Samples,
    private readonly rounds: Set<number>,
  ) {}

  private pick<T>(xs: T[]): T[] {
    const chosen = xs.filter((_, r) => this.rounds.has(r))
    return chosen.length ? chosen : xs
  }

  /** Median and min of µs per node for one key at one size. */
  perNode(k: string, n: number): { med: number; min: number } {
    const xs = this.pick(this.s.get(`${k}/${n}`) ?? []).map((ms) => (ms * 1000) / n)
    return { med: median(xs), min: Math.min(...xs) }
  }

  /** Median of the per-round slopes (T(HI) − T(LO)) / (HI − LO), in µs per node. */
  slope(k: string): number {
    const lo = this.s.get(`${k}/${LO}`) ?? []
    const hi = this.s.get(`${k}/${HI}`) ?? []
    return median(this.pick(hi.map((h, r) => ((h - lo[r]!) * 1000) / (HI - LO))))
  }
}

function chooseRounds(foreign: number[]): { rounds: Set<number>; note: string } {
  const quiet = foreign.flatMap((load, r) => (load < QUIET ? [r] : []))
  const loads = `foreign load per round ${foreign.map((x) => x.toFixed(2)).join(', ')} cores`
  if (quiet.length >= 3)
    return {
      rounds: new Set(quiet),
      note: `medians over the ${quiet.length} quiet rounds (< ${QUIET} foreign cores) of ${foreign.length}; ${loads}`,
    }
  return {
    rounds: new Set(foreign.map((_, r) => r)),
    note: `**the machine was busy**: ${quiet.length} of ${foreign.length} rounds quiet (< ${QUIET} foreign cores), so medians are over all rounds and the min is the better estimate of the unloaded cost; ${loads}`,
  }
}

const f = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '—')
const kb = (b: number): string => `${b.toLocaleString('en-US')} B`

const STORE_LABEL: Record<StoreKind, string> = {
  none: 'no checkpoint writes',
  memory: 'memory store (checkpoints off)',
  lmdb: 'LMDB, fsynced (checkpoints on)',
}

function bar(kind: Kind, store: StoreKind, value: number): string {
  if (store === 'lmdb') return ''
  const limit = kind === 'action' ? 5 : kind === 'template' ? 10 : undefined
  if (limit === undefined) return ''
  return value <= limit ? `≤ ${limit}: met` : `≤ ${limit}: **missed**`
}

export function renderReport(x: ReportInput): string {
  const { rounds, note } = chooseRounds(x.foreign)
  const s = new Stats(x.samples, rounds)
  const cpu = new Stats(x.cpu, rounds)
  const out: string[] = []
  const how = [
    x.bundled ? 'src/ bundled and minified by esbuild, as shipped' : 'src/ run through tsx',
    ...(x.withLangGraph ? ['tea and LangGraph.js in separate child processes, alternating each round'] : []),
  ].join('; ')
  out.push(`${x.machine}; ${how}; ${x.rounds} rounds after 3 warm-up rounds; ${f(x.seconds, 0)} s in all.`, '', `${note}.`, '')
  out.push('### Engine overhead per node (µs, median (min) over rounds)', '')
  out.push(
    '| node kind | store | 200 nodes: run / N | 2,000 nodes: run / N | slope 200→2,000 | SPEC §4 bar (slope) | CPU: 2,000 nodes / N, slope |',
    '|---|---|---|---|---|---|---|',
  )
  const kinds = Object.keys(x.labels) as Kind[]
  for (const kind of kinds) {
    for (const store of ['none', 'memory', 'lmdb'] as StoreKind[]) {
      const k = `tea/${kind}/${store}`
      const a = s.perNode(k, LO)
      const b = s.perNode(k, HI)
      const sl = s.slope(k)
      const c = `${f(cpu.perNode(k, HI).med, 2)}, ${f(cpu.slope(k), 2)}`
      out.push(
        `| ${x.labels[kind]} | ${STORE_LABEL[store]} | ${f(a.med, 2)} (${f(a.min, 2)}) | ${f(b.med, 2)} (${f(b.min, 2)}) | ${f(sl, 2)} | ${bar(kind, store, sl)} | ${c} |`,
      )
    }
  }

  out.push('', '### Checkpoint cost per node, durable (µs; slope with LMDB − slope without; bar ≤ 20)', '')
  out.push('| node kind | LMDB − no writes | LMDB − memory store | LMDB, 2,000 nodes: run / N − no writes run / N |', '|---|---|---|---|')
  for (const kind of kinds) {
    const d1 = s.slope(`tea/${kind}/lmdb`) - s.slope(`tea/${kind}/none`)
    const d2 = s.slope(`tea/${kind}/lmdb`) - s.slope(`tea/${kind}/memory`)
    const d3 = s.perNode(`tea/${kind}/lmdb`, HI).med - s.perNode(`tea/${kind}/none`, HI).med
    out.push(`| ${x.labels[kind]} | ${f(d1, 2)} ${d1 <= 20 ? '(met)' : '(**missed**)'} | ${f(d2, 2)} | ${f(d3, 2)} |`)
  }

  if (x.withLangGraph) out.push('', ...langGraphSection(x, s))
  out.push('', ...loadSection(x), '', ...bytesSection(x))
  return out.join('\n') + '\n'
}

function langGraphSection(x: ReportInput, s: Stats): string[] {
  const out = ['### LangGraph.js, same linear graph, same run (µs per node, median (min))', '']
  out.push(
    `StateGraph, N nodes each returning \`{ i: s.i + 1 }\`. At 2,000 nodes LangGraph ran in the first ${x.lg2000Rounds.none} round(s) without and ${x.lg2000Rounds.memory} with MemorySaver (each run takes seconds), and its slope pairs those rounds' runs.`,
    '',
  )
  out.push(
    '| LangGraph.js | 200 nodes: run / N | 2,000 nodes: run / N | slope | × tea `run:` node, same N (200 / 2,000 / slope) |',
    '|---|---|---|---|---|',
  )
  const teaRun = (store: StoreKind) => ({
    lo: s.perNode(`tea/run/${store}`, LO).med,
    hi: s.perNode(`tea/run/${store}`, HI).med,
    sl: s.slope(`tea/run/${store}`),
  })
  const rows: Array<[string, string, StoreKind[]]> = [
    ['no checkpointer', 'lg/none', ['none', 'memory']],
    ['MemorySaver', 'lg/memory', ['memory', 'lmdb']],
  ]
  for (const [label, k, against] of rows) {
    const a = s.perNode(k, LO)
    const b = s.perNode(k, HI)
    const sl = s.slope(k)
    const ratios = against
      .map((store) => {
        const t = teaRun(store)
        return `vs ${STORE_LABEL[store]}: ${f(a.med / t.lo, 0)}× / ${f(b.med / t.hi, 0)}× / ${f(sl / t.sl, 0)}×`
      })
      .join('; ')
    out.push(`| ${label} | ${f(a.med, 0)} (${f(a.min, 0)}) | ${f(b.med, 0)} (${f(b.min, 0)}) | ${f(sl, 0)} | ${ratios} |`)
  }
  const c = x.lgCompile.map(([n, ms]) => `${n} nodes ${f(ms, 1)} ms`).join(', ')
  out.push('', `LangGraph build + compile: ${c}.`)
  return out
}

function loadSection(x: ReportInput): string[] {
  const out = ['### Load and compile, once per agent (not in the figures above)', '']
  out.push('| node kind | nodes | loadAgentText ms | compileAgent ms | (load + compile) / N µs |', '|---|---|---|---|---|')
  for (const [k, loadMs, compileMs] of x.load) {
    const [kind, n] = k.split('/')
    out.push(`| ${kind} | ${n} | ${f(loadMs, 1)} | ${f(compileMs, 1)} | ${f(((loadMs + compileMs) * 1000) / Number(n), 0)} |`)
  }
  out.push('', 'First load in the process includes JIT warm-up of the YAML parser and validator; these are single cold measurements.')
  return out
}

function bytesSection(x: ReportInput): string[] {
  const out = ['### Checkpoint bytes, 2,000-node run on LMDB (default retention: 3 snapshots)', '']
  out.push(
    '| node kind | step records (bytes each) | snapshots (bytes each) | written in all | `checkpointBytes(runId)` after the run | tea.lmdb size / allocated |',
    '|---|---|---|---|---|---|',
  )
  for (const [kind, b] of x.bytes) {
    const each = b.stepRecords ? b.stepBytes / b.stepRecords : 0
    const snapEach = b.snapshots ? b.snapshotBytes / b.snapshots : 0
    out.push(
      `| ${kind} | ${b.stepRecords} × ${f(each, 1)} B | ${b.snapshots} × ${f(snapEach, 1)} B | ${kb(b.stepBytes + b.snapshotBytes)} | ${kb(b.retained)} | ${kb(b.fileSize)} / ${kb(b.fileAllocated)} |`,
    )
  }
  return out
}
