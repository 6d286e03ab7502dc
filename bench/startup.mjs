#!/usr/bin/env node
// Cold start and peak memory for issue 14, against the SPEC §4 bars, on a machine others may be using:
//   time  x64 executable: `tea --version` ≤ 1.3×, `tea run` of a 3-node `run:` agent ≤ 1.6× `node -e 0` of its
//         own Node (24.21.0); the bundle on that Node, the same run, ≤ 2.0×; the bundle on the host Node, for
//         information. Every command runs once per round, in an order shuffled per round, so that a busy moment
//         hits all of them and no command always follows the same other; medians and min–max over the rounds,
//         ratios of medians to the `node -e 0` of the same round set (the bar's figure), and each run's ratio to the
//         `node -e 0` of its own round (median and quartiles: the noise). `tea run` uses a data dir that already
//         exists (as on a board after its first run). The binaries' pages are dropped from the page cache first,
//         as after a boot: pages a build has just written start tea ~0.15x sooner.
//   rss   (--rss) peak RSS from /usr/bin/time -f %M, fresh data dir per run: `node -e 0`, `tea --version`, 3 `run:`
//         nodes (bar ≤ 45 MiB), 200 `run:` nodes and 200 `json.transform` nodes (bar ≤ 50 MiB), for the x64
//         executable and for the bundle on the host Node (bench/rss.mjs's setting). The executables are dropped
//         from the page cache first and read once: how the kernel caches a freshly written file changes the
//         file-backed part of RSS by up to 18 MiB.
//   qemu  (--qemu) the linux-arm64 executable under qemu, wall times, for information only.
//   examples (--examples) each example from its cassette through the x64 executable: peak RSS and wall time.
//   phases (--phases) `tea run three.yaml` through the x64 executable with TEA_TRACE_LOADER=1: the time the loader
//         took to compile the program from its code cache (V8 deserialises every function the cache holds).
//   model (--model) `tea run` of a one-call agent (examples/hello) against a local fake Ollama the bench starts
//         (test/support/fake-model-server.ts, answering at once): the start of an agent that calls a model, its
//         first request included. Wall times, in shuffled rounds, like the first table.
// --before DIR adds a `tea` and `tea.cjs` built from an earlier tree (rows marked "before") to every table, in the
// same rounds. The load average before and after each table is printed beside it.
//
//   node bench/startup.mjs [--runs 20] [--rss] [--rss-runs 10] [--qemu] [--examples] [--phases] [--model] [--before DIR] [--no-time]
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCache } from '../scripts/fetch-runtimes.mjs'
import { runnerFor } from '../scripts/build/qemu.mjs'
import { loadTarget } from '../scripts/build/targets.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'bench', '.out', 'startup')
const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const runs = Number(opt('--runs', 20))
const rssRuns = Number(opt('--rss-runs', 10))
const before = opt('--before') && resolve(opt('--before'))

const x64 = loadTarget(root, 'linux-x64')
const nodeOf = (target) =>
  join(buildCache(), 'node', `node-linux-${target.arch === 'arm' ? 'armv7l' : target.arch}-${target.node}`, 'bin', 'node')
const node24 = nodeOf(x64)
const exe = join(root, 'dist', 'linux-x64', 'tea')
const bundle = join(root, 'dist', 'linux-x64', 'tea.cjs')
/** What the time tables run, dropped from the page cache before they start (dropPages). */
const binaries = [exe, bundle, node24, ...(before ? [join(before, 'tea'), join(before, 'tea.cjs')] : [])]

function env() {
  const e = { ...process.env, TEA_CACHE_DIR: join(out, 'cache'), HOME: out }
  for (const k of Object.keys(e)) if (k.startsWith('NODE_') || (k.startsWith('TEA_') && k !== 'TEA_CACHE_DIR')) delete e[k]
  return e
}

/** The q-quantile of xs (linear between the two nearest samples). */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  const at = (s.length - 1) * q
  return s[Math.floor(at)] + (s[Math.ceil(at)] - s[Math.floor(at)]) * (at - Math.floor(at))
}
const median = (xs) => quantile(xs, 0.5)
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

function agents() {
  mkdirSync(out, { recursive: true })
  const three = join(out, 'three.yaml')
  writeFileSync(
    three,
    [
      'name: three',
      'initial_state:',
      '  name: world',
      'nodes:',
      ...['greet', 'shape', 'done'].flatMap((n, i) => [
        `  - name: ${n}`,
        '    run: |',
        `      return ${['{ greeting: "hello " + state.name }', '{ shaped: state.greeting.toUpperCase() }', '{ done: true }'][i]}`,
      ]),
      '',
    ].join('\n'),
  )
  const linear = (kind, n) => {
    let text = `name: ${kind}-${n}\nsettings:\n  max_steps: ${n + 10}\ninitial_state:\n  i: 0\nnodes:\n`
    for (let i = 0; i < n; i++)
      text +=
        kind === 'run'
          ? `  - name: n${i}\n    run: |\n      return { i: state.i + 1 }\n`
          : `  - name: n${i}\n    uses: json.transform\n    with: { data: { a: ${i}, b: 2 }, pick: [a] }\n`
    const file = join(out, `${kind}-${n}.yaml`)
    writeFileSync(file, text)
    return file
  }
  return { three, run200: linear('run', 200), transform200: linear('transform', 200) }
}

/** Drops files' pages from the page cache (posix_fadvise DONTNEED through dd): the next run reads them from disk. */
function dropPages(files) {
  for (const f of files) spawnSync('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none'])
}

/**
 * Runs each case once per round, in an order shuffled per round (seeded, so a rerun takes the same orders): a fixed
 * order let one command always follow the same other, and the same executable measured twice in one round came out
 * 1.8 ms apart in 80 rounds. Returns per case the list of {ms, kib}, round by round (sample i of every case is
 * from round i).
 */
function rounds(cases, n, { warmup = 2, rss = false, env: extra = {} } = {}) {
  const samples = cases.map(() => [])
  const random = seeded(0x7ea)
  for (let i = 0; i < n + warmup; i++) {
    for (const j of shuffled(cases.length, random)) {
      const c = cases[j]
      c.before?.()
      const argv = rss ? ['/usr/bin/time', '-f', '%M', ...c.argv] : c.argv
      const t = process.hrtime.bigint()
      const r = spawnSync(argv[0], argv.slice(1), { env: { ...env(), ...extra }, cwd: out, encoding: 'utf8', maxBuffer: 1 << 26 })
      const ms = Number(process.hrtime.bigint() - t) / 1e6
      if (r.status !== 0) throw new Error(`${c.argv.join(' ')} exited ${r.status}: ${r.stderr}`)
      c.check?.(r.stdout)
      if (i >= warmup) samples[j].push({ ms, kib: rss ? Number(r.stderr.trim().split('\n').pop()) : undefined })
    }
  }
  return samples
}

/** mulberry32: a small seeded generator, enough to shuffle command orders reproducibly. */
function seeded(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

function shuffled(n, random) {
  const order = [...Array(n).keys()]
  for (let i = n - 1; i > 0; i--) {
    const k = Math.floor(random() * (i + 1))
    ;[order[i], order[k]] = [order[k], order[i]]
  }
  return order
}

const fmt = (xs, f = (x) => x.toFixed(1)) => `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`

function timeTable(a) {
  const dataDir = (name) => join(out, `data-${name}`)
  const run = (argv, name) => [...argv, 'run', a.three, '-q', '--data-dir', dataDir(name)]
  const isDone = (stdout) => {
    if (JSON.parse(stdout).done !== true) throw new Error(`unexpected final state ${stdout}`)
  }
  const cases = [
    { label: `\`node -e 0\` (Node ${x64.node}, the executable's)`, argv: [node24, '-e', '0'], base: true },
    { label: '`tea --version`, x64 executable', argv: [exe, '--version'], bar: 1.3 },
    { label: '`tea run three.yaml`, x64 executable', argv: run([exe], 'exe'), check: isDone, bar: 1.6 },
    { label: `\`node tea.cjs run three.yaml\`, bundle on Node ${x64.node}`, argv: run([node24, bundle], 'b24'), check: isDone, bar: 2.0 },
  ]
  if (before)
    cases.push(
      { label: 'before: `tea --version`, x64 executable', argv: [join(before, 'tea'), '--version'], bar: 1.3 },
      { label: 'before: `tea run three.yaml`, x64 executable', argv: run([join(before, 'tea')], 'before-exe'), check: isDone, bar: 1.6 },
      {
        label: `before: \`node tea.cjs run three.yaml\`, bundle on Node ${x64.node}`,
        argv: run([node24, join(before, 'tea.cjs')], 'before-b24'),
        check: isDone,
        bar: 2.0,
      },
    )
  const hostBase = cases.length
  cases.push(
    { label: `\`node -e 0\` (host Node ${process.version})`, argv: [process.execPath, '-e', '0'], base: true },
    { label: `\`node tea.cjs run three.yaml\`, bundle on the host Node`, argv: run([process.execPath, bundle], 'bhost'), check: isDone },
  )
  if (before)
    cases.push({
      label: 'before: `node tea.cjs run three.yaml`, bundle on the host Node',
      argv: run([process.execPath, join(before, 'tea.cjs')], 'before-bhost'),
      check: isDone,
    })
  // As a board runs them after a boot (read from disk as they run), not as a build or a copy just wrote them:
  // pages a write left in the page cache made the 3-node run 1.51x `node -e 0` here, the same pages read back
  // 1.64–1.68x.
  dropPages(binaries)
  const loadBefore = load()
  const s = rounds(cases, runs)
  const lines = [
    `${runs} rounds (after 2 discarded), each command once per round, in a shuffled order; wall ms median (min–max); load average ${loadBefore} before, ${load()} after.`,
    '',
    '| command | ms median (min–max) | × `node -e 0` (medians) | × `node -e 0` of its round: median (25–75 %) | bar (on the medians) |',
    '|---|---|---|---|---|',
  ]
  cases.forEach((c, j) => {
    const baseRuns = s[j < hostBase ? 0 : hostBase]
    const m = median(s[j].map((x) => x.ms))
    const ratio = m / median(baseRuns.map((x) => x.ms))
    // Each run against the `node -e 0` of its own round: what drifts over the rounds (the machine's other work)
    // cancels, and the spread says how far apart two equal commands can come out.
    const paired = s[j].map((x, i) => x.ms / baseRuns[i].ms)
    const spread = `${median(paired).toFixed(2)} (${quantile(paired, 0.25).toFixed(2)}–${quantile(paired, 0.75).toFixed(2)})`
    const bar = c.bar ? `≤ ${c.bar.toFixed(1)}×: ${ratio <= c.bar ? 'met' : '**missed**'}` : ''
    lines.push(`| ${c.label} | ${fmt(s[j].map((x) => x.ms))} | ${c.base ? '1.00' : ratio.toFixed(2)} | ${c.base ? '' : spread} | ${bar} |`)
  })
  if (before) lines.push('', ...beforeAfter(cases, s))
  return lines.join('\n')
}

/**
 * Each `before:` case against its counterpart, run by run: the difference within one round, where the machine's
 * drift (a VM's neighbours; the same executable's median moved by 3 ms over minutes here) cancels.
 */
function beforeAfter(cases, s) {
  const rows = ['| after − before, the same round | ms, median (25–75 %) |', '|---|---|']
  cases.forEach((c, j) => {
    const k = cases.findIndex((b) => b.label === `before: ${c.label}`)
    if (k < 0) return
    const d = s[j].map((x, i) => x.ms - s[k][i].ms)
    const f = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`
    rows.push(`| ${c.label} | ${f(median(d))} (${f(quantile(d, 0.25))} to ${f(quantile(d, 0.75))}) |`)
  })
  return rows
}

function rssTable(a) {
  const fresh = (name) => () => rmSync(join(out, `rss-${name}`), { recursive: true, force: true })
  const dir = (name) => join(out, `rss-${name}`)
  const set = (label, argv, name, bars) => [
    { label: `${label} \`--version\``, argv: [...argv, '--version'] },
    {
      label: `${label} run, 3 \`run:\` nodes`,
      argv: [...argv, 'run', a.three, '-q', '--data-dir', dir(name)],
      before: fresh(name),
      bar: bars && 45,
    },
    {
      label: `${label} run, 200 \`run:\` nodes`,
      argv: [...argv, 'run', a.run200, '-q', '--data-dir', dir(name)],
      before: fresh(name),
      bar: bars && 50,
      check: (o) =>
        JSON.parse(o).i === 200 ||
        (() => {
          throw new Error(o)
        })(),
    },
    {
      label: `${label} run, 200 \`json.transform\` nodes`,
      argv: [...argv, 'run', a.transform200, '-q', '--data-dir', dir(name)],
      before: fresh(name),
      bar: bars && 50,
    },
  ]
  const cases = [
    { label: `\`node -e 0\` (Node ${x64.node})`, argv: [node24, '-e', '0'] },
    ...set('x64 executable', [exe], 'exe', true),
    ...(before ? set('before: x64 executable', [join(before, 'tea')], 'before-exe', true) : []),
    { label: `\`node -e 0\` (host Node ${process.version})`, argv: [process.execPath, '-e', '0'] },
    ...set('bundle, host Node:', [process.execPath, bundle], 'bhost', false),
    ...(before ? set('before: bundle, host Node:', [process.execPath, join(before, 'tea.cjs')], 'before-bhost', false) : []),
  ]
  // How the kernel caches the executable's pages shows in its file-backed RSS: drop them, then read once.
  dropPages([exe, node24, ...(before ? [join(before, 'tea')] : [])])
  const loadBefore = load()
  const s = rounds(cases, rssRuns, { warmup: 1, rss: true })
  const lines = [
    `${rssRuns} rounds (after 1 discarded), each in a shuffled order; peak RSS MiB from /usr/bin/time -f %M, fresh data dir per run; load average ${loadBefore} before, ${load()} after.`,
    '',
    '| command | peak RSS MiB median (min–max) | bar |',
    '|---|---|---|',
  ]
  cases.forEach((c, j) => {
    const mib = s[j].map((x) => x.kib / 1024)
    const bar = c.bar ? `≤ ${c.bar} MiB: ${median(mib) <= c.bar ? 'met' : '**missed**'}` : ''
    lines.push(`| ${c.label} | ${fmt(mib)} | ${bar} |`)
  })
  return lines.join('\n')
}

function qemuTable(a) {
  const t = loadTarget(root, 'linux-arm64')
  const file = join(root, 'dist', 'linux-arm64', 'tea')
  if (!existsSync(file)) return `(no ${file}: run npm run sea -- --target linux-arm64)`
  const pre = runnerFor(t.arch)
  const cases = [
    { label: `\`node -e 0\` (arm64 Node ${t.node})`, argv: [...pre, nodeOf(t), '-e', '0'] },
    { label: '`tea --version`', argv: [...pre, file, '--version'] },
    { label: '`tea run three.yaml`', argv: [...pre, file, 'run', a.three, '-q', '--data-dir', join(out, 'data-arm64')] },
  ]
  const n = Number(opt('--qemu-runs', 5))
  const loadBefore = load()
  const s = rounds(cases, n, { warmup: 1 })
  const base = median(s[0].map((x) => x.ms))
  const lines = [
    `linux-arm64 under qemu-user (information only: qemu says nothing about a board's speed); ${n} rounds, each in a shuffled order; load average ${loadBefore} before, ${load()} after.`,
    '',
    '| command | ms median (min–max) | × `node -e 0` |',
    '|---|---|---|',
  ]
  cases.forEach((c, j) =>
    lines.push(`| ${c.label} | ${fmt(s[j].map((x) => x.ms))} | ${(median(s[j].map((x) => x.ms)) / base).toFixed(2)} |`),
  )
  return lines.join('\n')
}

function phasesTable(a) {
  const exes = [['x64 executable', exe], ...(before ? [['before: x64 executable', join(before, 'tea')]] : [])]
  const cases = exes.map(([label, file], j) => ({
    label,
    argv: [file, 'run', a.three, '-q', '--data-dir', join(out, `data-phases-${j}`)],
  }))
  const loadBefore = load()
  const samples = cases.map(() => [])
  for (let i = 0; i < runs + 2; i++)
    for (const [j, c] of cases.entries()) {
      const r = spawnSync(c.argv[0], c.argv.slice(1), { env: { ...env(), TEA_TRACE_LOADER: '1' }, cwd: out, encoding: 'utf8' })
      const m = /program compiled in ([\d.]+) ms \(code cache (\w+)/.exec(r.stderr)
      if (r.status !== 0 || !m) throw new Error(`${c.argv.join(' ')} exited ${r.status}: ${r.stderr}`)
      if (m[2] !== 'used') throw new Error(`${c.label}: the code cache was ${m[2]}`)
      if (i >= 2) samples[j].push(Number(m[1]))
    }
  const lines = [
    `${runs} rounds (after 2 discarded), in turn; ms median (min–max) from the loader's trace; load average ${loadBefore} before, ${load()} after.`,
    '',
    '| executable | program compiled from its code cache, ms |',
    '|---|---|',
  ]
  cases.forEach((c, j) => lines.push(`| ${c.label} | ${fmt(samples[j])} |`))
  return lines.join('\n')
}

function examplesTable() {
  const lines = ['| example | peak RSS MiB | wall ms | exit |', '|---|---|---|---|']
  for (const name of readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, 'examples', d.name, 'cassette.jsonl')))
    .map((d) => d.name)
    .sort()) {
    const dir = join(root, 'examples', name)
    const data = join(out, `ex-${name}`)
    rmSync(data, { recursive: true, force: true })
    const t = process.hrtime.bigint()
    const r = spawnSync(
      '/usr/bin/time',
      ['-f', '%M', exe, 'run', join(dir, 'agent.yaml'), '--replay', join(dir, 'cassette.jsonl'), '-q', '--data-dir', data],
      { env: env(), cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 },
    )
    const ms = Number(process.hrtime.bigint() - t) / 1e6
    const kib = Number(r.stderr.trim().split('\n').pop())
    lines.push(`| ${name} | ${(kib / 1024).toFixed(1)} | ${ms.toFixed(0)} | ${r.status} |`)
  }
  return lines.join('\n')
}

/** A fake Ollama in a process of its own, answering every chat at once; resolves with its URL and a stop(). */
async function fakeOllama() {
  const script = join(out, 'model-script.json')
  writeFileSync(script, JSON.stringify({ replies: [{ content: 'Hello, Ada!', repeat: true }] }))
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(root, 'test', 'support', 'fake-model-server.ts'), '--port', '0', '--script', script],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  const url = await new Promise((resolveUrl, reject) => {
    let text = ''
    child.stdout.on('data', (d) => {
      text += d
      if (text.includes('\n')) resolveUrl(text.split('\n')[0].trim())
    })
    child.on('exit', (code) => reject(new Error(`the fake model server exited (${code})`)))
  })
  return { url, stop: () => child.kill('SIGTERM') }
}

function modelTable(url) {
  const agent = join(root, 'examples', 'hello', 'agent.yaml')
  const run = (argv, name) => [...argv, 'run', agent, '-q', '--data-dir', join(out, `data-model-${name}`)]
  const greeted = (stdout) => {
    if (JSON.parse(stdout).greeting !== 'Hello, Ada!') throw new Error(`unexpected final state ${stdout}`)
  }
  const cases = [
    { label: `\`node -e 0\` (Node ${x64.node})`, argv: [node24, '-e', '0'] },
    { label: '`tea run` of examples/hello, x64 executable', argv: run([exe], 'exe'), check: greeted },
    { label: `the same, bundle on Node ${x64.node}`, argv: run([node24, bundle], 'b24'), check: greeted },
    ...(before
      ? [
          { label: 'before: `tea run` of examples/hello, x64 executable', argv: run([join(before, 'tea')], 'before-exe'), check: greeted },
          {
            label: `before: the same, bundle on Node ${x64.node}`,
            argv: run([node24, join(before, 'tea.cjs')], 'before-b24'),
            check: greeted,
          },
        ]
      : []),
  ]
  dropPages(binaries) // as the time table
  const loadBefore = load()
  const s = rounds(cases, runs, { env: { OLLAMA_HOST: url } })
  const lines = [
    `${runs} rounds (after 2 discarded), each command once per round, in a shuffled order; wall ms median (min–max); load average ${loadBefore} before, ${load()} after.`,
    '',
    '| command | ms median (min–max) |',
    '|---|---|',
  ]
  cases.forEach((c, j) => lines.push(`| ${c.label} | ${fmt(s[j].map((x) => x.ms))} |`))
  if (before) lines.push('', ...beforeAfter(cases, s))
  return lines.join('\n')
}

async function main() {
  for (const f of [exe, bundle, node24]) if (!existsSync(f)) throw new Error(`${f} is missing: run npm run sea -- --target linux-x64`)
  const a = agents()
  const sections = []
  if (!args.includes('--no-time')) sections.push(['Cold start, x64', timeTable(a)])
  if (args.includes('--rss')) sections.push(['Peak RSS', rssTable(a)])
  if (args.includes('--qemu')) sections.push(['Cold start, linux-arm64 under qemu', qemuTable(a)])
  if (args.includes('--phases')) sections.push(['Program compile, x64 executable', phasesTable(a)])
  if (args.includes('--examples')) sections.push(['Examples from their cassettes, x64 executable', examplesTable()])
  if (args.includes('--model')) {
    const server = await fakeOllama()
    try {
      sections.push(['A model call: examples/hello against a local fake Ollama', modelTable(server.url)])
    } finally {
      server.stop()
    }
  }
  console.log(sections.map(([title, body]) => `#### ${title}\n\n${body}`).join('\n\n'))
}

await main()
