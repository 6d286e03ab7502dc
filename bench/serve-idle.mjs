// `tea serve` idle memory, issue 14's bar (≤ 60 MiB): the x64 executable started on an empty agents folder, its
// peak RSS (VmHWM) read 3 s after start, then SIGTERM. Medians of --runs (10) with min–max; with --before DIR the
// executable in DIR is measured in the same rounds, one after the other. Each executable is first dropped from the
// page cache (as bench/startup.mjs does): a freshly written one shows up to ~25 MiB more until its pages go.
//
//   node build.mjs --target linux-x64 --quiet && node scripts/sea.mjs --target linux-x64 --quiet
//   node bench/serve-idle.mjs [--runs 10] [--before DIR]
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const runs = Number(opt('--runs', 10))
const before = opt('--before')
const exes = [['after', join(root, 'dist', 'linux-x64', 'tea')], ...(before ? [['before', join(resolve(before), 'tea')]] : [])]

async function idlePeak(exe) {
  const dir = mkdtempSync(join(tmpdir(), 'tea-serve-idle-'))
  mkdirSync(join(dir, 'agents'))
  const port = 20000 + Math.floor(Math.random() * 20000)
  const child = spawn(exe, ['serve', '--data-dir', join(dir, 'data'), '--agents', join(dir, 'agents'), '--listen', `127.0.0.1:${port}`], {
    stdio: 'ignore',
  })
  try {
    await sleep(3000)
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
    return Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024
  } finally {
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
    rmSync(dir, { recursive: true, force: true })
  }
}

for (const [, exe] of exes) spawnSync('dd', [`if=${exe}`, 'iflag=nocache', 'count=0', 'status=none'])
const figures = Object.fromEntries(exes.map(([label]) => [label, []]))
for (let i = 0; i < runs; i++) for (const [label, exe] of exes) figures[label].push(await idlePeak(exe))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log('| `tea serve`, idle 3 s after start | peak RSS MiB, median (min–max) | bar |\n|---|---|---|')
for (const [label, xs] of Object.entries(figures))
  console.log(
    `| ${label} | ${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}) | ≤ 60 MiB: ${median(xs) <= 60 ? 'met' : '**missed**'} |`,
  )
