import { spawnSync } from 'node:child_process'
import { buildSync } from 'esbuild'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'

// processIo asked in a plain Node child (tsx would load node:tty itself) whose stderr is what the case gives it;
// the child says on stdout whether it took stderr for a terminal and whether finding out loaded any of Node's modules
// (creating process.stderr loads its stream modules).
const IO = buildSync({
  entryPoints: [resolve(__dirname, '../../src/cli/io.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  write: false,
}).outputFiles[0]?.text
const CHILD = `const { processIo } = (() => { const module = { exports: {} }; const exports = module.exports
${IO}
return module.exports })()
const io = processIo()
const known = process.moduleLoadList.length
const isTTY = io.isTTY
const loaded = process.moduleLoadList.length > known
require('node:fs').writeSync(1, JSON.stringify({ isTTY, loaded }) + '\\n')`

function ask(stderr: 'pipe' | number | 'ignore'): { isTTY: boolean; loaded: boolean } {
  const r = spawnSync(process.execPath, ['-e', CHILD], { stdio: ['ignore', 'pipe', stderr], encoding: 'utf8' })
  assert.is(r.status, 0, r.stderr ?? '')
  return JSON.parse(r.stdout.trim())
}

test("stderr to a pipe is no terminal, found without loading Node's stream modules (issue 14: a start does not create process.stderr)", () => {
  assert.equal(ask('pipe'), { isTTY: false, loaded: false })
})

test("stderr to /dev/null is no terminal, found without loading Node's stream modules", () => {
  assert.equal(ask('ignore'), { isTTY: false, loaded: false })
})

test('stderr to a file is no terminal', () => {
  const dir = tempDir('tea-io-')
  const fd = openSync(join(dir, 'err'), 'w')
  try {
    assert.equal(ask(fd), { isTTY: false, loaded: false })
  } finally {
    closeSync(fd)
    rmSync(dir, { recursive: true, force: true })
  }
})

// script(1) gives the child a terminal; without it the test is reported skipped (a failure under CI), never passed.
const noScript =
  spawnSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).status === 0
    ? false
    : 'script(1) is not installed (apt-get install bsdutils, which Debian installs everywhere)'

skipIf(test, noScript, 'stderr to a terminal is one (under script(1))', () => {
  const dir = tempDir('tea-io-')
  try {
    const out = join(dir, 'out')
    const command = `${JSON.stringify(process.execPath)} -e ${shellQuote(CHILD.replace('writeSync(1,', `writeFileSync(${JSON.stringify(out)},`))}`
    const r = spawnSync('script', ['-qec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
    assert.is(r.status, 0, `${r.stdout}${r.stderr}`)
    assert.equal(JSON.parse(readFileSync(out, 'utf8')).isTTY, true)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`
}

test.run()
