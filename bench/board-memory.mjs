#!/usr/bin/env node
// Issue 14 item 4: tea on a 512 MB board, emulated with a memory cgroup (ulimit -v cannot: Node 24 reserves ~2 GiB
// of address space for its code range and will not start under it). Each example runs from its cassette through
// the x64 executable inside a cgroup whose limit is what a Pi Zero 2 W leaves a service (512 MB less the kernel,
// the GPU split and a minimal Debian: --budget, 400 MiB), swap included in the limit, so going over means the
// kernel's OOM killer, as on the board. Then the smallest limit under which each still completes is found by
// bisection (8 MiB steps; a run slower than 3× its time at the budget counts as failing: it thrashes): the
// headroom a user has. The cgroup's peak (memory.max_usage_in_bytes) counts page
// cache the run touched (the 129 MB executable is read through it), so it is reported beside the process's RSS.
// Needs root and a writable cgroup (v1 `memory` controller or cgroup v2); prints why and exits 0 otherwise.
//
//   node scripts/sea.mjs --target linux-x64 --quiet && node bench/board-memory.mjs [--budget 400] [--runs 3] [--only NAME]
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serveSite } from '../scripts/example-site.mjs'
import { cleanEnv } from './cold-start-bundle.mjs'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const budgetMiB = Number(opt('--budget', 400))
const runs = Number(opt('--runs', 3))
const only = opt('--only') // a substring of the agents' names
const exe = join(root, 'dist', 'linux-x64', 'tea')
const out = join(root, 'bench', '.out', 'board-memory')
const MiB = 1024 * 1024

/** A memory cgroup we may create, v1 or v2, with the files to set its limit and read its peak; or why not. */
function cgroupRoot() {
  for (const [base, v] of [
    ['/sys/fs/cgroup/memory', 1],
    ['/sys/fs/cgroup', 2],
  ]) {
    const dir = join(base, `tea-bench-${process.pid}`)
    try {
      mkdirSync(dir)
    } catch {
      continue
    }
    if (v === 1 && existsSync(join(dir, 'memory.limit_in_bytes'))) return { dir, v }
    if (v === 2 && existsSync(join(dir, 'memory.max'))) return { dir, v }
    rmdirSync(dir)
  }
  return undefined
}

function setLimit(cg, bytes) {
  if (cg.v === 1) {
    // memsw (memory + swap) must be at least the memory limit: lower memory first when shrinking, raise memsw first.
    const memsw = join(cg.dir, 'memory.memsw.limit_in_bytes')
    const write = (f, b) => writeFileSync(join(cg.dir, f), String(b))
    try {
      write('memory.limit_in_bytes', bytes)
      if (existsSync(memsw)) write('memory.memsw.limit_in_bytes', bytes)
    } catch {
      if (existsSync(memsw)) write('memory.memsw.limit_in_bytes', bytes)
      write('memory.limit_in_bytes', bytes)
    }
    writeFileSync(join(cg.dir, 'memory.max_usage_in_bytes'), '0')
  } else {
    writeFileSync(join(cg.dir, 'memory.max'), String(bytes))
    if (existsSync(join(cg.dir, 'memory.swap.max'))) writeFileSync(join(cg.dir, 'memory.swap.max'), '0')
  }
}

const peak = (cg) => Number(readFileSync(join(cg.dir, cg.v === 1 ? 'memory.max_usage_in_bytes' : 'memory.peak'), 'utf8'))

/**
 * One run of `argv` inside the cgroup, with the page cache dropped first so that the executable's pages are read
 * and charged inside the cgroup as on a board that just booted: exit status (137 when OOM-killed), the process's
 * peak RSS and the cgroup's peak. Asynchronous, so that an example's page can be served from this process meanwhile.
 */
async function runIn(cg, limit, argv, timeoutMs = 600_000) {
  setLimit(cg, limit)
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3')
  } catch {}
  // The shell puts itself in the cgroup, then becomes /usr/bin/time, which runs tea: all three are charged.
  const script = `echo $$ > ${join(cg.dir, 'cgroup.procs')} && exec /usr/bin/time -f %M "$@"`
  const t0 = performance.now()
  const child = spawn('sh', ['-c', script, 'sh', ...argv], {
    cwd: root,
    env: cleanEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  })
  // Under a limit close to its working set a run re-reads the executable's evicted pages for minutes instead of
  // failing: past `timeoutMs` it counts as not completing (status "slow").
  const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), timeoutMs)
  let stderr = ''
  child.stderr.on('data', (d) => {
    stderr += d
  })
  const code = await new Promise((done) => child.on('close', (c) => done(c ?? 137)))
  const ms = performance.now() - t0
  const status = ms >= timeoutMs ? 'slow' : code
  clearTimeout(timer)
  const kib = Number(
    stderr
      .trim()
      .split('\n')
      .findLast((l) => /^\d+$/.test(l)),
  )
  return { status, ms, rssMiB: kib / 1024, cgroupMiB: peak(cg) / MiB }
}

function examples() {
  return readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, 'examples', d.name, 'cassette.jsonl')))
    .map((d) => d.name)
    .sort()
}

/** The 200-node agent of `run:` nodes that bench/rss.mjs measures. */
function bigAgent() {
  const file = join(out, 'run200.yaml')
  const nodes = Array.from({ length: 200 }, (_, i) => `  - name: n${i}\n    run: |\n      return { i: state.i + 1 }\n`)
  writeFileSync(file, `name: run200\nsettings:\n  max_steps: 210\ninitial_state:\n  i: 0\nnodes:\n${nodes.join('')}`)
  return file
}

/** One Python `run:` node: the largest runtime tea carries (Pyodide, WebAssembly). */
function pythonAgent() {
  const file = join(out, 'python.yaml')
  writeFileSync(file, 'name: py\nnodes:\n  - name: p\n    language: python\n    run: |\n      return {"n": sum(range(10))}\n')
  return file
}

async function main() {
  if (!existsSync(exe)) throw new Error(`${exe} is missing: node scripts/sea.mjs --target linux-x64 --quiet`)
  const cg = cgroupRoot()
  if (!cg) {
    console.log('board-memory: skipped: no writable memory cgroup here (needs root and cgroup v1 `memory` or v2)')
    return
  }
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const cases = examples().map((name) => {
    const dir = join(root, 'examples', name)
    return { name, dir, agent: join(dir, 'agent.yaml'), replay: ['--replay', join(dir, 'cassette.jsonl')] }
  })
  cases.push({ name: '200 `run:` nodes', agent: bigAgent(), replay: [] })
  cases.push({ name: 'a Python `run:` node (Pyodide)', agent: pythonAgent(), replay: [] })
  if (only) cases.splice(0, cases.length, ...cases.filter((c) => c.name.includes(only)))
  const lines = [
    `Budget ${budgetMiB} MiB (memory + swap), cgroup v${cg.v}; median of ${runs} runs at the budget; smallest limit found by bisection.`,
    '',
    '| agent | at the budget: exit | wall ms | peak RSS MiB | cgroup peak MiB | smallest limit that completes within 3× that time (MiB) |',
    '|---|---|---|---|---|---|',
  ]
  try {
    for (const c of cases) {
      const stop = c.dir && existsSync(join(c.dir, 'site')) ? await serveSite(join(c.dir, 'site')) : undefined
      const argvFor = () => {
        const data = join(out, `data-${c.name.replace(/\W+/g, '-')}`)
        rmSync(data, { recursive: true, force: true })
        return [exe, 'run', c.agent, ...c.replay, '-q', '--data-dir', data]
      }
      const at = []
      for (let i = 0; i < runs; i++) at.push(await runIn(cg, budgetMiB * MiB, argvFor()))
      const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
      const slowAfter = Math.max(5000, 3 * median(at.map((r) => r.ms)))
      let lo = 8
      let hi = budgetMiB
      if (at.some((r) => r.status !== 0)) hi = Number.NaN
      while (hi - lo > 8) {
        const mid = Math.round((lo + hi) / 16) * 8
        if ((await runIn(cg, mid * MiB, argvFor(), slowAfter)).status === 0) hi = mid
        else lo = mid
      }
      await stop?.()
      lines.push(
        `| ${c.name} | ${at.map((r) => r.status).join(', ')} | ${median(at.map((r) => r.ms)).toFixed(0)} | ${median(at.map((r) => r.rssMiB)).toFixed(1)} | ${median(at.map((r) => r.cgroupMiB)).toFixed(1)} | ${Number.isNaN(hi) ? 'fails at the budget' : hi} |`,
      )
      console.error(lines.at(-1))
    }
  } finally {
    rmdirSync(cg.dir) // a cgroup is removed with rmdir, once no process is left in it
  }
  console.log(lines.join('\n'))
}

await main()
