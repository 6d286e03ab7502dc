// `npm test`: typecheck; the layer check (scripts/check-layers.mjs), the unused-code check (knip) and the format
// check (biome: `npm run format` fixes it); build what the tests run (the x64 bundle the end-to-end tests drive and,
// when test/e2e/sea.test.ts is selected, each target's single executable); then every uvu test file under c8.
// The checks and the build are independent and run side by side; each prints its output as one block when it ends.
//
// A file that runs built artefacts or many processes, starts a language engine or worker threads, or loads
// node-llama-cpp runs in a process of its own (OWN below): one that leaves a handle open or crashes cannot take
// the others down with it. The other files, unit tests in process, share a process with files of their folder,
// in batches (`batches`): a process costs ~0.45 CPU-seconds to start under tsx and c8, most of a unit file's
// time. Processes run concurrently, at most TEA_TEST_JOBS at a time (default 3. On 2 cores many files wait on
// subprocesses, servers and timers, so 2 left a core idle: the whole suite took 9 m 08 s. With the unit files in
// batches, each process is busier, and 4 made them contend: 8 m 22 s against 7 m 33 s at 3, the same tree on the
// same machine; bench/RESULTS.md). TEA_TEST_JOBS=1 runs them one after another; TEA_TEST_ALONE=1 gives every
// file its own process. The slowest start first: each process's last duration is kept in
// node_modules/.cache/tea-test-times.json; one never timed here is placed by its folder (SLOW below). Each
// process's output is printed as one block when it ends, never interleaved with another's. test/e2e/sea.test.ts
// runs once per target (TEA_SEA_TARGET), each a process of its own: a target under qemu takes minutes.
//
// Built artefacts are built once, before any test file starts, and shared: the files only read them
// (TEA_TEST_ARTEFACTS=built tells test/e2e/sea-harness.ts not to rebuild an executable). A file never builds into
// dist/ itself: one that did would rewrite the bundle another file is running.
//
// uvu's exit code is not trusted alone: each file's summary is read (uvu's Total leaves skipped tests out: Passed
// = Total, and a file ran something or skipped something), and a plain closing line
// "N passed, N failed, N skipped" is printed for CI. A test that cannot run here (no qemu, no mount) is skipped
// with a `SKIP <reason>` line (test/support/skip.ts); the reasons are repeated at the end, and under CI (CI=true,
// where .ci/run installs everything) any skip fails the run. Coverage: c8 collects NODE_V8_COVERAGE from every
// child process, concurrent or not, and prints one merged summary.
//
//   npm test                                  everything
//   npm test -- engine                        only test files whose path contains "engine"
//   node scripts/test.mjs --suites engine     those files alone: no checks, no coverage (builds the executables
//                                             first when sea.test.ts is among them, not the bundle)
//   TEA_TEST_JOBS=1 npm test                  one process at a time
//   TEA_TEST_ALONE=1 npm test                 every file in a process of its own
//   TEA_TEST_CPU=1 npm test                   also the CPU-seconds each file used (itself and its children), and a ranking
//   TEA_TEST_FILE_TIMEOUT_MS=…                a file still running after this is killed and counted as failed
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const self = fileURLToPath(import.meta.url)
const bin = (name) => join(root, 'node_modules', '.bin', name)
// A file that has not exited after this long is killed and counted as failed (a handle left open keeps a process
// alive after its tests have passed; that must fail loudly, not hang CI).
const FILE_TIMEOUT_MS = Number(process.env.TEA_TEST_FILE_TIMEOUT_MS ?? 20 * 60_000)
const JOBS = Math.max(1, Number(process.env.TEA_TEST_JOBS) || 3)
const TIMES = join(root, 'node_modules', '.cache', 'tea-test-times.json')
const CPU = process.env.TEA_TEST_CPU === '1'
// What every test file's process is given. The tea processes the files start (the bundle, the executables) keep
// their code caches here, not in the user's ~/.cache/tea; a file that tests the cache sets its own TEA_CACHE_DIR.
const FILE_ENV = { TEA_CACHE_DIR: process.env.TEA_CACHE_DIR ?? join(root, 'node_modules', '.cache', 'tea-test-cache') }
// The two lines bash's `times` prints (the shell's, then its children's user and system time), at a file's end.
const TIMES_LINES = /\d+m[\d.]+s \d+m[\d.]+s\n(\d+)m([\d.]+)s (\d+)m([\d.]+)s\n$/
// Where a file never timed on this machine starts: seconds it is guessed to take, by path (first match). From a
// serial run on 2 cores: the executables under qemu take minutes, the corpus and the end-to-end files tens of
// seconds, the language engines several; most unit files under a second.
const SLOW = [
  [/^e2e\/fleet\.test/, 160],
  [/^e2e\/sea\.test/, 150],
  [/^e2e\/run-sandboxes/, 75],
  [/^compat\//, 60],
  [/^(aof\/roles\/route-service|e2e\/(examples|fleet-partition|serve-page|agent-start)|soak\/)/, 30],
  [/^e2e\//, 15],
  [/^(python|prolog|lua)\//, 8],
  [/^(aof\/store|cli|pool|planning|build|reasoning)\//, 5],
  [/./, 1],
]

// Which files run in a process of their own; the rest share one with other files of their folder (`batches`).
// Starting Node, tsx and c8's coverage hooks costs a file ~0.45 CPU-seconds on the 2-core machine, most of a unit
// file's time: core/'s 11 files took 5 CPU-seconds one process each and 1.3 in one; prolog/'s 4, 19 and 11. A file
// keeps its own process when it runs a built artefact or many processes (e2e, sea, build, scripts, compat, soak,
// support: their time is their own), starts a pool of worker threads (pool) or loads node-llama-cpp's addon
// (llm/gguf*). The files at the top of test/ have no folder to share. A batch's guessed time is capped, which also
// caps its memory: python/'s 9 files in one process peaked at 1.3 GB (Pyodide's interpreters), one alone at 0.43.
const OWN = [/^(e2e|sea|build|scripts|compat|soak|support|pool)\//, /^llm\/gguf/, /^[^/]+\.test\.ts$/]
const BATCH_MS = 30_000
// TEA_TEST_ALONE=1 runs every file in a process of its own: to tell whether a failure comes from a file's batch.
const ALONE = process.env.TEA_TEST_ALONE === '1'

const mode = process.argv[2]
if (mode === '--suites') await runSuites(process.argv[3] ?? '')
else if (mode === '--artefacts') await buildArtefacts(process.argv[3] === 'sea')
else await main(mode ?? '')

async function main(filter) {
  const files = selected(filter)
  const sea = files.some(needsSea)
  const steps = [
    ['typecheck (tsc --noEmit)', bin('tsc'), ['--noEmit', '-p', '.']],
    ['layers (scripts/check-layers.mjs)', process.execPath, ['scripts/check-layers.mjs']],
    ['unused files, exports and dependencies (knip)', bin('knip'), ['--no-progress']],
    ['format (biome format; `npm run format` rewrites)', bin('biome'), ['format', '.']],
    [
      sea ? 'build dist/linux-x64/tea.cjs and each target’s single executable' : 'build dist/linux-x64/tea.cjs',
      process.execPath,
      [self, '--artefacts', sea ? 'sea' : 'bundle'],
    ],
  ]
  const t0 = Date.now()
  const results = await Promise.all(
    steps.map(async ([title, cmd, args]) => {
      const r = await run(cmd, args)
      process.stdout.write(`\n> ${title} (${secs(r.ms)})\n${r.all}`)
      return { title, ...r }
    }),
  )
  console.log(`\nchecks and build: ${secs(Date.now() - t0)}`)
  const bad = results.filter((r) => r.code !== 0)
  if (bad.length) {
    for (const r of bad) console.error(`\n${r.title} failed (exit ${r.code ?? r.signal})`)
    process.exit(1)
  }
  console.log(`\n> test files under c8, one process each, ${JOBS} at a time`)
  const c8 = ['--reporter=text-summary', '--src', 'src', '-x', 'test/**', '-x', 'bench/**', '-x', 'dist/**', '-x', 'scripts/**']
  const child = spawn(bin('c8'), [...c8, process.execPath, self, '--suites', filter], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, TEA_TEST_ARTEFACTS: 'built' },
  })
  child.on('close', (code) => process.exit(code ?? 1))
}

/** Builds what the test files run, once: the x64 bundle, and with `sea` each runnable target's executable. */
async function buildArtefacts(sea) {
  const { buildTarget } = await import('../build.mjs')
  if (!sea || process.env.TEA_SKIP_SEA === '1') {
    await buildTarget('linux-x64', { quiet: true })
    return
  }
  const { seaTarget } = await import('./sea.mjs')
  const { missingTools } = await import('./build/qemu.mjs')
  const { listTargets, loadTarget } = await import('./build/targets.mjs')
  // linux-x64's executable is built from dist/linux-x64/tea.cjs, which seaTarget builds first. A target whose
  // emulator is missing is left to sea.test.ts, which reports it skipped.
  for (const name of listTargets(root)) {
    if (name !== 'linux-x64' && missingTools(loadTarget(root, name).arch).length) continue
    const r = await seaTarget(name, { quiet: true })
    if (r.rebuilt) console.log(`  ${name}: built ${relative(root, r.file)}`)
  }
}

function needsSea(file) {
  return readFileSync(file, 'utf8').includes('ensureSea(')
}

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
}

function selected(filter) {
  return testFiles(join(root, 'test')).filter((f) => relative(root, f).includes(filter))
}

function readTimes() {
  try {
    return JSON.parse(readFileSync(TIMES, 'utf8'))
  } catch {
    return {}
  }
}

function guess(name, times) {
  return times[name] ?? SLOW.find(([re]) => re.test(name))[1] * 1000
}

/**
 * The files of one folder of test/ that share processes, in batches of at most BATCH_MS of guessed time (so that
 * a batch is no longer than the files that run alone, and the two cores stay busy to the end). A batch is named
 * by its folder and first file, which is where its time is kept.
 */
function batches(folder, list, times) {
  const out = []
  for (const item of list) {
    const ms = guess(item.name, times)
    const last = out.at(-1)
    if (last && last.ms + ms <= BATCH_MS) {
      last.files.push(item.file)
      last.ms += ms
    } else out.push({ files: [item.file], first: item.name, ms })
  }
  return out.map((b) =>
    b.files.length === 1
      ? { files: b.files, name: b.first }
      : { files: b.files, name: `${folder}/ ${b.files.length} files from ${b.first.slice(folder.length + 1)}` },
  )
}

async function runSuites(filter) {
  const files = selected(filter)
  if (process.env.TEA_TEST_ARTEFACTS !== 'built' && files.some(needsSea)) {
    process.stdout.write('> build each target’s single executable (sea.test.ts runs them)\n')
    const r = await run(process.execPath, [self, '--artefacts', 'sea'])
    process.stdout.write(r.all)
    if (r.code !== 0) process.exit(1)
    process.env.TEA_TEST_ARTEFACTS = 'built'
  }
  const times = readTimes()
  // A file that runs the executables (sea.test.ts) runs once per target, each in its own process
  // (TEA_SEA_TARGET): one target under qemu takes minutes, and the four side by side finish far sooner.
  const { listTargets } = await import('./build/targets.mjs')
  const alone = []
  const shared = new Map()
  for (const file of files) {
    const name = relative(join(root, 'test'), file)
    if (needsSea(file))
      for (const target of listTargets(root)) alone.push({ files: [file], name: `${name} ${target}`, env: { TEA_SEA_TARGET: target } })
    else if (ALONE || OWN.some((re) => re.test(name))) alone.push({ files: [file], name })
    else {
      const folder = name.split('/')[0]
      if (!shared.has(folder)) shared.set(folder, [])
      shared.get(folder).push({ file, name })
    }
  }
  const queue = [...alone, ...[...shared].flatMap(([folder, list]) => batches(folder, list, times))].sort(
    (a, b) => guess(b.name, times) - guess(a.name, times),
  )
  let passed = 0
  let failed = 0
  let skipped = 0
  let done = 0
  const broken = []
  const skips = []
  const started = Date.now()
  const cpu = {}
  const runOne = async ({ files, name, env }) => {
    // uvu runs the files under a folder whose paths, relative to it, match a pattern.
    const dir = files.length === 1 ? dirname(files[0]) : join(root, 'test')
    const pattern = `^(${files.map((f) => escape(relative(dir, f))).join('|')})$`
    const r = await run(
      ...cpuTimed(process.execPath, [
        join(root, 'node_modules/uvu/bin.js'),
        '-r',
        'tsx',
        '-r',
        join(root, 'test/support/uvu-details.ts'),
        dir,
        pattern,
      ]),
      name,
      env,
    )
    const used = cpuSeconds(r)
    if (used !== undefined) {
      cpu[name] = used
      r.all = r.all.replace(TIMES_LINES, '')
    }
    const plain = r.out.replace(/\x1b\[[0-9;]*m/g, '')
    const num = (label) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? NaN)
    const total = num('Total')
    const ok = num('Passed')
    const skip = num('Skipped') || 0
    for (const m of plain.matchAll(/^SKIP (.+)$/gm)) skips.push(`test/${name}: ${m[1]}`)
    const empty = Number.isNaN(total) || total + skip === 0
    // uvu prints each file's name, then its count "(passed / total)". A file that never calls test.run() shows its
    // name alone (in a batch, uvu runs its tests under the next file's name): that is counted as a failure.
    const silent = Number.isNaN(total)
      ? []
      : files.map((f) => relative(dir, f)).filter((f) => !new RegExp(`^${escape(f)}\\n[^\\n]*\\(\\d+ / \\d+\\)$`, 'm').test(plain))
    let tail = silent.map((f) => `\n${f}: ran no test of its own (no test.run()?)\n`).join('')
    if (empty || silent.length || r.code !== 0 || ok !== total) {
      broken.push(name)
      failed += empty ? 1 : Math.max(1, total - ok, silent.length)
      if (Number.isNaN(total)) tail = `\n${name}: no summary (exit ${r.code ?? r.signal}): the file did not run to the end\n`
    }
    passed += Number.isNaN(ok) ? 0 : ok
    skipped += skip
    times[name] = r.ms
    done++
    const cpuNote = used === undefined ? '' : `, ${used.toFixed(1)} CPU-s`
    process.stdout.write(`${r.all}${tail}  ${name} (${secs(r.ms)}${cpuNote}; ${done}/${queue.length})\n`)
  }
  const next = { i: 0 }
  await Promise.all(
    Array.from({ length: Math.min(JOBS, queue.length) }, async () => {
      while (next.i < queue.length) await runOne(queue[next.i++])
    }),
  )
  try {
    mkdirSync(dirname(TIMES), { recursive: true })
    writeFileSync(TIMES, `${JSON.stringify({ ...readTimes(), ...times }, null, 1)}\n`)
  } catch {
    // Only the order of the next run depends on it.
  }
  if (CPU) {
    const total = Object.values(cpu).reduce((a, b) => a + b, 0)
    const top = Object.entries(cpu)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
    console.log(`\nCPU-seconds (user + sys, the file and the children it waited for): ${total.toFixed(0)} in all; the most:`)
    for (const [n, s] of top) console.log(`  ${s.toFixed(1).padStart(6)}  test/${n}`)
  }
  if (broken.length) console.log(`\nfailing files:\n${broken.map((b) => `  test/${b}`).join('\n')}`)
  console.log(`\n${files.length} files (${queue.length} processes) in ${secs(Date.now() - started)}, ${JOBS} at a time`)
  if (skips.length) console.log(`\nskipped (not run on this machine):\n${skips.map((s) => `  ${s}`).join('\n')}`)
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
  const ci = process.env.CI === 'true' || process.env.CI === '1'
  if (ci && skipped)
    console.log(
      `CI=${process.env.CI}: ${skipped} skipped test${skipped === 1 ? '' : 's'} count as failures here (CI installs what every test needs)`,
    )
  process.exitCode = failed === 0 && files.length > 0 && !(ci && skipped) ? 0 : 1
}

/**
 * Runs `cmd` with its output collected: `out` is its stdout (where uvu's summary and SKIP lines go), `all` its
 * stdout and stderr as they came, printed by the caller as one block. `name` is set for a test file, which is
 * killed after FILE_TIMEOUT_MS; `env` is added to the environment.
 */
function run(cmd, args, name, env) {
  return new Promise((done) => {
    const t0 = Date.now()
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(name && FILE_ENV), ...env } })
    let out = ''
    let all = ''
    const timer =
      name &&
      setTimeout(() => {
        all += `\n${name}: still running after ${FILE_TIMEOUT_MS / 1000}s; killed\n`
        child.kill('SIGKILL')
      }, FILE_TIMEOUT_MS)
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d
      all += d
    })
    child.stderr.setEncoding('utf8').on('data', (d) => {
      all += d
    })
    child.on('error', (e) => {
      all += `${e.message}\n`
    })
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer)
      done({ code, signal, out, all, ms: Date.now() - t0 })
    })
  })
}

/**
 * With TEA_TEST_CPU=1, a file runs under bash, whose `times` then prints the CPU time of the file's process and of
 * every child it waited for (servers, tea processes, qemu) on its last line: where the suite's CPU goes.
 */
function cpuTimed(cmd, args) {
  return CPU ? ['bash', ['-c', '"$@"; s=$?; times >&2; exit $s', 'bash', cmd, ...args]] : [cmd, args]
}

/** The CPU-seconds bash's `times` printed last (children's user and system time), or undefined. */
function cpuSeconds(r) {
  if (!CPU) return undefined
  const m = TIMES_LINES.exec(r.all)
  return m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : undefined
}

function secs(ms) {
  return `${(ms / 1000).toFixed(1)}s`
}

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
