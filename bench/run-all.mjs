#!/usr/bin/env node
// Runs the benchmarks of issue 2 (the engine) one after another, each printing its markdown (bench/RESULTS.md,
// "Engine (issue 2)", says what each measures). Sequential on purpose: they time the same two cores.
//   node bench/run-all.mjs
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'
const steps = [
  ['engine overhead, LangGraph.js ratio, checkpoint bytes', npx, ['tsx', 'bench/engine.bench.ts']],
  ['cold start of the bundle', process.execPath, ['bench/cold-start-bundle.mjs']],
  ['peak RSS of a 200-node run', process.execPath, ['bench/rss.mjs', '--bundle', 'bench/.out/engine/tea.cjs']],
]
let failed = 0
for (const [title, cmd, args] of steps) {
  process.stdout.write(`\n## ${title}\n\n$ ${[cmd === process.execPath ? 'node' : cmd, ...args].join(' ')}\n\n`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exitCode = failed ? 1 : 0
