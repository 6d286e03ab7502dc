// `npm test`: typecheck, build the bundle the end-to-end tests drive, then every uvu suite under c8.
// uvu's own exit code is not trusted alone: its summary is checked (Passed + Skipped = Total, Total > 0), and a
// plain closing line "N passed, N failed" is printed for CI.
import { spawn, spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => join(root, 'node_modules', '.bin', name)
const pattern = process.argv[2] ?? '.test.ts$'

function step(title, cmd, args) {
  console.error(`\n> ${title}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) {
    console.error(`\n${title} failed (exit ${r.status ?? r.signal})`)
    process.exit(1)
  }
}

step('typecheck (tsc --noEmit)', bin('tsc'), ['--noEmit', '-p', '.'])
step('build dist/linux-x64/tea.cjs', process.execPath, ['build.mjs', '--target', 'linux-x64', '--quiet'])

console.error('\n> uvu test suites under c8')
const child = spawn(bin('c8'), ['--reporter=text-summary', '--src', 'src', '-x', 'test/**', '-x', 'bench/**', '-x', 'dist/**', bin('uvu'), '-r', 'tsx', 'test', pattern], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
})
let out = ''
child.stdout.on('data', (d) => {
  out += d
  process.stdout.write(d)
})
child.on('close', (code) => {
  const plain = out.replace(/\x1b\[[0-9;]*m/g, '')
  const num = (label) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? NaN)
  const total = num('Total')
  const passed = num('Passed')
  const skipped = num('Skipped') || 0
  const failed = Number.isNaN(total) ? NaN : total - passed - skipped
  if (Number.isNaN(total) || total === 0) {
    console.log('\n0 passed, 0 failed')
    console.error('no test summary found: the suites did not run to the end')
    process.exit(1)
  }
  console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
  process.exit(code === 0 && failed === 0 ? 0 : 1)
})
