/**
 * Issue 9 point 2: a damaged tea.lmdb — truncated, a meta page damaged, both damaged, a meta page pointing past
 * the file — is STORE_CORRUPT naming the file and what to do, through the real CLI in a child process, never a
 * SIGBUS or SIGSEGV. An intact file still opens.
 */
import { openSync, readFileSync, truncateSync, writeFileSync, writeSync, closeSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'

const AGENT = `name: small
nodes:
${Array.from({ length: 8 }, (_, i) => `  - name: n${i + 1}\n    run: "return { n${i + 1}: 'v'.repeat(3000) }"`).join('\n')}
`
const WORD = process.arch === 'arm' || process.arch === 'ia32' ? 4 : 8
const META = 2 * WORD + 8 // where LMDB's meta starts on a page
const LAST_PAGE = META + 8 + 2 * WORD + 2 * (8 + 5 * WORD)

/** A data dir holding a real, finished run; returns its tea.lmdb path. */
async function store(dir: string): Promise<string> {
  writeFileSync(join(dir, 'agent.yaml'), AGENT)
  const r = await tea(['run', join(dir, 'agent.yaml'), '--data-dir', join(dir, 'data'), '--run-id', 'ok', '-q'])
  assert.is(r.code, 0, r.stderr)
  return join(dir, 'data', 'tea.lmdb')
}

function patch(file: string, offset: number, bytes: number[]): void {
  const fd = openSync(file, 'r+')
  writeSync(fd, Buffer.from(bytes), 0, bytes.length, offset)
  closeSync(fd)
}

const cases: Array<[string, (file: string) => void, string]> = [
  ['truncated to half', (f) => truncateSync(f, Math.floor(statSync(f).size / 2 / 4096) * 4096), 'cut short'],
  ['truncated inside its meta pages', (f) => truncateSync(f, 5000), 'cut short'],
  ['the first meta page damaged', (f) => patch(f, META + 4, [0xff, 0xff, 0xff, 0xff]), 'its first meta page is damaged'],
  ['the second meta page damaged', (f) => patch(f, 4096 + META + 8 + 2 * WORD, [0x13, 0, 0, 0]), 'its second meta page is damaged'],
  [
    'both meta pages damaged',
    (f) => (patch(f, META + 4, [9, 9, 9, 9]), patch(f, 4096 + META + 4, [9, 9, 9, 9])),
    'both of its meta pages are damaged',
  ],
  [
    'a meta page pointing past the end',
    (f) => (patch(f, LAST_PAGE, [0, 0, 0, 0x40]), patch(f, 4096 + LAST_PAGE, [0, 0, 0, 0x40])),
    'cut short',
  ],
]

for (const [what, damage, says] of cases) {
  test(`9-2 a store file ${what}: STORE_CORRUPT with the file and what to do, never a crash`, async () => {
    const s = scratch()
    try {
      const file = await store(s.dir)
      damage(file)
      const r = await tea(['runs', '--data-dir', join(s.dir, 'data')])
      assert.is(r.signal, null, `killed by ${r.signal}`)
      assert.is(r.code, 1, r.stderr)
      assert.match(r.stderr, 'STORE_CORRUPT')
      assert.match(r.stderr, file)
      assert.match(r.stderr, says)
      assert.match(r.stderr, `mv ${file} ${file}.damaged`)
    } finally {
      s.cleanup()
    }
  })
}

test('an intact store still opens after the check', async () => {
  const s = scratch()
  try {
    await store(s.dir)
    const r = await tea(['runs', '--data-dir', join(s.dir, 'data'), '--json'])
    assert.is(r.code, 0, r.stderr)
    assert.is(JSON.parse(r.stdout)[0].status, 'completed')
    assert.ok(readFileSync(join(s.dir, 'data', 'tea.lmdb')).length > 0)
  } finally {
    s.cleanup()
  }
})

test.run()
