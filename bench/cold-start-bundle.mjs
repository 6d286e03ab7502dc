#!/usr/bin/env node
// Cold start of the plain bundle (issue 2 "Measured"; issue 14's bar: `tea run` of 3 nodes ≤ 2× `node -e 0`), with every
// NODE_* variable unset (NODE_EXTRA_CA_CERTS alone adds ~50–65 ms to any Node start here: research/perf-anchors.md §1):
//   node -e 0 | node tea.cjs --version | node tea.cjs run three.yaml -q --data-dir D | peer: import LangGraph.js
// `tea run` uses a data dir that already exists (as on a device after the first run); each run adds one run record.
// (bench/cold-start.mjs, another bench, measures the single executables; this one the bundle and `tea run`.)
//
//   node bench/cold-start-bundle.mjs [--runs N] [--bundle FILE]
// Without --bundle it builds a fresh linux-x64 bundle from the current source into bench/.out/engine/ (the same
// build as `node build.mjs --target linux-x64`, without touching dist/ that other builds use).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'bench', '.out', 'engine')
const args = process.argv.slice(2)
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const runs = Number(opt('--runs')) || 30

export function cleanEnv() {
  const e = { ...process.env }
  for (const k of Object.keys(e)) if (k.startsWith('NODE_')) delete e[k]
  return e
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** The bundle to measure: --bundle FILE, else a fresh build of linux-x64 into bench/.out/engine/tea.cjs. */
export async function bundleFile(file = opt('--bundle')) {
  if (file) return resolve(file)
  const { buildTarget } = await import('../build.mjs')
  const outfile = join(out, 'tea.cjs')
  mkdirSync(out, { recursive: true })
  await buildTarget('linux-x64', { outfile, quiet: true })
  return outfile
}

const THREE = `name: three
initial_state:
  name: world
nodes:
  - name: greet
    run: |
      return { greeting: 'hello ' + state.name }
  - name: shape
    uses: json.transform
    with:
      data: "{{ state }}"
      pick: [greeting]
  - name: done
    run: |
      return { done: true }
`

const PEER = `const { StateGraph, Annotation, START, END } = await import('@langchain/langgraph')\n`

function hasHyperfine() {
  return spawnSync('hyperfine', ['--version'], { stdio: 'ignore' }).status === 0
}

/** Median wall ms (and mean user+sys ms with hyperfine) of each command, round-robin when looping ourselves. */
function measure(commands, n) {
  if (hasHyperfine()) {
    const json = join(out, 'hyperfine.json')
    rmSync(json, { force: true })
    const quoted = commands.map((c) => c.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' '))
    execFileSync('hyperfine', ['-N', '--warmup', '3', '--runs', String(n), '--export-json', json, ...quoted], {
      env: cleanEnv(),
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    return JSON.parse(readFileSync(json, 'utf8')).results.map((r) => ({
      ms: r.median * 1000,
      cpu: (r.user + r.system) * 1000,
      min: r.min * 1000,
    }))
  }
  const times = commands.map(() => [])
  for (let i = 0; i < n + 3; i++) {
    commands.forEach(([cmd, ...rest], j) => {
      const t = process.hrtime.bigint()
      const r = spawnSync(cmd, rest, { env: cleanEnv(), cwd: root, stdio: 'ignore' })
      if (r.status !== 0) throw new Error(`${[cmd, ...rest].join(' ')} exited ${r.status}`)
      if (i >= 3) times[j].push(Number(process.hrtime.bigint() - t) / 1e6)
    })
  }
  return times.map((xs) => ({ ms: median(xs), min: Math.min(...xs) }))
}

async function main() {
  const bundle = await bundleFile()
  mkdirSync(out, { recursive: true })
  const agent = join(out, 'three.yaml')
  writeFileSync(agent, THREE)
  const peer = join(out, 'import-langgraph.mjs')
  writeFileSync(peer, PEER)
  const dataDir = join(out, 'cold-data')
  rmSync(dataDir, { recursive: true, force: true })
  // Check the commands work before timing them (and create the data dir).
  const first = spawnSync(process.execPath, [bundle, 'run', agent, '-q', '--data-dir', dataDir], { env: cleanEnv(), encoding: 'utf8' })
  if (first.status !== 0 || JSON.parse(first.stdout).done !== true) throw new Error(`tea run failed: ${first.stderr}`)
  const version = execFileSync(process.execPath, [bundle, '--version'], { env: cleanEnv(), encoding: 'utf8' }).trim()
  const node = process.execPath
  const rows = [
    ['`node -e 0`', [node, '-e', '0']],
    ['`node tea.cjs --version`', [node, bundle, '--version']],
    ['`node tea.cjs run three.yaml -q --data-dir D` (3 nodes, LMDB)', [node, bundle, 'run', agent, '-q', '--data-dir', dataDir]],
    ["peer: `import('@langchain/langgraph')` alone", [node, peer]],
  ]
  const results = measure(
    rows.map((r) => r[1]),
    runs,
  )
  const base = results[0].ms
  const lines = [
    `${runs} runs per command after 3 warm-ups, ${hasHyperfine() ? 'hyperfine -N' : 'spawnSync loop'}, NODE_* unset; ${process.version}; bundle ${bundle.startsWith(root) ? bundle.slice(root.length + 1) : bundle} (${version}).`,
    '',
    '| command | median ms (min) | × `node -e 0` | bar |',
    '|---|---|---|---|',
  ]
  results.forEach((r, i) => {
    const ratio = r.ms / base
    const bar = i === 2 ? (ratio <= 2 ? '≤ 2×: met' : '≤ 2×: **missed**') : ''
    lines.push(`| ${rows[i][0]} | ${r.ms.toFixed(1)} (${r.min.toFixed(1)}) | ${ratio.toFixed(2)} | ${bar} |`)
  })
  console.log(lines.join('\n'))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e)
    process.exit(1)
  })
}
