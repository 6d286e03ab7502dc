#!/usr/bin/env node
// Peak RSS of a 200-node `tea run` from the bundle (issue 2 "Measured"; SPEC §4 bar now ≤ 50 MiB), read from
// `/usr/bin/time -f %M` (KiB; reported in MiB, as research/perf-anchors.md does), NODE_* unset, a fresh data dir
// per run. Alongside, in the same run, round-robin: `node -e 0`, `tea --version`, and the peer — LangGraph.js
// running the same 200-node linear graph (no checkpointer, and MemorySaver).
//
//   node bench/rss.mjs [--runs N] [--bundle FILE]      (bundle: as bench/cold-start-bundle.mjs)
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundleFile, cleanEnv, median } from './cold-start-bundle.mjs'

const args = process.argv.slice(2)
const runs = Number(args.includes('--runs') ? args[args.indexOf('--runs') + 1] : 0) || 7
const out = join(dirname(fileURLToPath(import.meta.url)), '.out', 'engine')

function linear(kind, n) {
  let text = `name: rss-${kind}-${n}\nsettings:\n  max_steps: ${n + 10}\ninitial_state:\n  i: 0\nnodes:\n`
  for (let i = 0; i < n; i++) {
    text +=
      kind === 'run'
        ? `  - name: n${i}\n    run: |\n      return { i: state.i + 1 }\n`
        : `  - name: n${i}\n    uses: json.transform\n    with: { data: { a: ${i}, b: 2 }, pick: [a] }\n`
  }
  return text
}

const PEER = (checkpointer) => `
const { StateGraph, Annotation, MemorySaver, START, END } = await import('@langchain/langgraph')
const S = Annotation.Root({ i: Annotation(), v: Annotation() })
const g = new StateGraph(S)
const n = 200
for (let k = 0; k < n; k++) g.addNode('n' + k, (s) => ({ i: s.i + 1 }))
g.addEdge(START, 'n0')
for (let k = 1; k < n; k++) g.addEdge('n' + (k - 1), 'n' + k)
g.addEdge('n' + (n - 1), END)
const graph = g.compile(${checkpointer ? '{ checkpointer: new MemorySaver() }' : ''})
const out = await graph.invoke({ i: 0, v: 0 }, { recursionLimit: n + 10, configurable: { thread_id: 't' } })
if (out.i !== n) throw new Error('bad final state ' + JSON.stringify(out))
process.stdout.write(JSON.stringify(out) + '\\n')
`

/** Runs argv under /usr/bin/time; returns peak RSS in MiB and wall ms. */
function peak(argv, before) {
  before?.()
  const t = process.hrtime.bigint()
  const r = spawnSync('/usr/bin/time', ['-f', '%M', ...argv], { env: cleanEnv(), encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - t) / 1e6
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`)
  const kib = Number(r.stderr.trim().split('\n').pop())
  return { mib: kib / 1024, ms, stdout: r.stdout }
}

async function main() {
  const bundle = await bundleFile()
  mkdirSync(out, { recursive: true })
  const files = {}
  for (const kind of ['run', 'transform']) writeFileSync((files[kind] = join(out, `rss-${kind}-200.yaml`)), linear(kind, 200))
  writeFileSync((files.lg = join(out, 'rss-langgraph-200.mjs')), PEER(false))
  writeFileSync((files.lgm = join(out, 'rss-langgraph-200-memory.mjs')), PEER(true))
  const dataDir = join(out, 'rss-data')
  const fresh = () => rmSync(dataDir, { recursive: true, force: true })
  const node = process.execPath
  const cases = [
    ['`node -e 0`', [node, '-e', '0']],
    ['`tea --version`', [node, bundle, '--version']],
    ['`tea run`, 200 `run:` nodes (LMDB)', [node, bundle, 'run', files.run, '-q', '--data-dir', dataDir], fresh, 'run'],
    [
      '`tea run`, 200 `json.transform` nodes (LMDB)',
      [node, bundle, 'run', files.transform, '-q', '--data-dir', dataDir],
      fresh,
      'transform',
    ],
    ['peer: LangGraph.js, 200 nodes, no checkpointer', [node, files.lg]],
    ['peer: LangGraph.js, 200 nodes, MemorySaver', [node, files.lgm]],
  ]
  const samples = cases.map(() => [])
  for (let i = 0; i < runs + 1; i++) {
    cases.forEach(([, argv, before, kind], j) => {
      const r = peak(argv, before)
      if (kind === 'run' && JSON.parse(r.stdout).i !== 200) throw new Error(`tea run ended with ${r.stdout}`)
      if (i > 0) samples[j].push(r) // the first round warms the disk cache
    })
  }
  const lines = [
    `${runs} runs per command (round-robin, after 1 discarded round), /usr/bin/time -f %M, NODE_* unset, fresh data dir per tea run; ${process.version}.`,
    '',
    '| command | peak RSS MiB median (min–max) | wall ms median | bar |',
    '|---|---|---|---|',
  ]
  cases.forEach(([label], j) => {
    const m = samples[j].map((s) => s.mib)
    const rss = median(m)
    const bar = label.startsWith('`tea run`') ? (rss <= 50 ? '≤ 50 MiB: met' : '≤ 50 MiB: **missed**') : ''
    lines.push(
      `| ${label} | ${rss.toFixed(1)} (${Math.min(...m).toFixed(1)}–${Math.max(...m).toFixed(1)}) | ${median(samples[j].map((s) => s.ms)).toFixed(0)} | ${bar} |`,
    )
  })
  console.log(lines.join('\n'))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
