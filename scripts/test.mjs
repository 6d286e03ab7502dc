// `npm test`: typecheck; the layer check (scripts/check-layers.mjs), the unused-code check (knip) and the format
// check (biome: `npm run format` fixes it); build the bundle the end-to-end tests drive; then every uvu test file
// under c8.
//
// Each test file runs in its own process (as uvu's own suite does): a file that loads a second copy of a native
// addon, leaves a handle open or crashes cannot take the others down with it. uvu's exit code is not trusted
// alone: each file's summary is read (uvu's Total leaves skipped tests out: Passed = Total, and a file ran something or
// skipped something), and a plain closing line
// "N passed, N failed, N skipped" is printed for CI. A test that cannot run here (no qemu, no mount) is skipped
// with a `SKIP <reason>` line (test/support/skip.ts); the reasons are repeated at the end, and under CI (CI=true,
// where .ci/run installs everything) any skip fails the run.
//
//   npm test                 everything
//   npm test -- engine       only test files whose path contains "engine"
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => join(root, 'node_modules', '.bin', name)
// A file that has not exited after this long is killed and counted as failed (a handle left open keeps a process
// alive after its tests have passed; that must fail loudly, not hang CI).
const FILE_TIMEOUT_MS = Number(process.env.TEA_TEST_FILE_TIMEOUT_MS ?? 20 * 60_000)

if (process.argv[2] === '--suites') await runSuites(process.argv[3] ?? '')
else main(process.argv[2] ?? '')

function main(filter) {
  step('typecheck (tsc --noEmit)', bin('tsc'), ['--noEmit', '-p', '.'])
  step('layers (scripts/check-layers.mjs)', process.execPath, ['scripts/check-layers.mjs'])
  step('unused files, exports and dependencies (knip)', bin('knip'), ['--no-progress'])
  step('format (biome format; `npm run format` rewrites)', bin('biome'), ['format', '.'])
  step('build dist/linux-x64/tea.cjs', process.execPath, ['build.mjs', '--target', 'linux-x64', '--quiet'])
  console.error('\n> test files under c8, one process each')
  const c8 = ['--reporter=text-summary', '--src', 'src', '-x', 'test/**', '-x', 'bench/**', '-x', 'dist/**', '-x', 'scripts/**']
  const r = spawnSync(bin('c8'), [...c8, process.execPath, fileURLToPath(import.meta.url), '--suites', filter], {
    cwd: root,
    stdio: 'inherit',
  })
  process.exit(r.status ?? 1)
}

function step(title, cmd, args) {
  console.error(`\n> ${title}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) {
    console.error(`\n${title} failed (exit ${r.status ?? r.signal})`)
    process.exit(1)
  }
}

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []))
}

async function runSuites(filter) {
  const files = testFiles(join(root, 'test')).filter((f) => relative(root, f).includes(filter))
  let passed = 0
  let failed = 0
  let skipped = 0
  const broken = []
  const skips = []
  const started = Date.now()
  for (const file of files) {
    const name = relative(join(root, 'test'), file)
    const t0 = Date.now()
    const { code, out } = await run(process.execPath, [
      join(root, 'node_modules/uvu/bin.js'),
      '-r',
      'tsx',
      '-r',
      join(root, 'test/support/uvu-details.ts'),
      dirname(file),
      `^${escape(file.slice(dirname(file).length + 1))}$`,
    ])
    const plain = out.replace(/\x1b\[[0-9;]*m/g, '')
    const num = (label) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? NaN)
    const total = num('Total')
    const ok = num('Passed')
    const skip = num('Skipped') || 0
    for (const m of plain.matchAll(/^SKIP (.+)$/gm)) skips.push(`test/${name}: ${m[1]}`)
    const empty = Number.isNaN(total) || total + skip === 0
    if (empty || code !== 0 || ok !== total) {
      broken.push(name)
      failed += empty ? 1 : Math.max(1, total - ok)
      if (Number.isNaN(total)) process.stdout.write(`\n${name}: no summary (exit ${code}): the file did not run to the end\n`)
    }
    passed += Number.isNaN(ok) ? 0 : ok
    skipped += skip
    process.stderr.write(`  ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s)\n`)
  }
  const secs = ((Date.now() - started) / 1000).toFixed(0)
  if (broken.length) console.log(`\nfailing files:\n${broken.map((b) => `  test/${b}`).join('\n')}`)
  console.log(`\n${files.length} files in ${secs}s`)
  if (skips.length) console.log(`\nskipped (not run on this machine):\n${skips.map((s) => `  ${s}`).join('\n')}`)
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
  const ci = process.env.CI === 'true' || process.env.CI === '1'
  if (ci && skipped)
    console.log(
      `CI=${process.env.CI}: ${skipped} skipped test${skipped === 1 ? '' : 's'} count as failures here (CI installs what every test needs)`,
    )
  process.exitCode = failed === 0 && files.length > 0 && !(ci && skipped) ? 0 : 1
}

function run(cmd, args) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    const timer = setTimeout(() => {
      process.stdout.write(`\n${args.at(-1)}: still running after ${FILE_TIMEOUT_MS / 1000}s; killed\n`)
      child.kill('SIGKILL')
    }, FILE_TIMEOUT_MS)
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      process.stdout.write(d)
    })
    child.stderr.on('data', (d) => process.stderr.write(d))
    child.on('close', (code) => {
      clearTimeout(timer)
      done({ code, out })
    })
  })
}

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
