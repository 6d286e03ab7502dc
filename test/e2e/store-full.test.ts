/**
 * Issue 9 point 3: a full disk under the data dir. A run on a 2 MiB tmpfs fills it: tea exits 1 with STORE_FULL
 * (no stack, the process not killed by lmdb's own failed writes); once the disk is given room, `tea resume`
 * finishes the run. Issue 28 item 11 (security probe 2, K): on the full disk every command ends with a coded message
 * and no stack frame, and beginning a new store there is STORE_FULL, not a SIGBUS. Needs root to mount; skipped
 * with the reason where mounting is impossible.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { skipIf } from '../support/skip.ts'
import { cannotMountTmpfs, scratch, tea } from './cli.ts'

const t = suite('a full disk')

const AGENT = `name: fill
nodes:
${Array.from(
  { length: 12 },
  (_, i) => `  - name: n${i + 1}
    run: "return { n${i + 1}: 'x'.repeat(400000) }"`,
).join('\n')}
`

skipIf(
  t,
  cannotMountTmpfs(),
  '9-3 28-11 a full disk ends the run with STORE_FULL (exit 1, no stack, every command coded, no SIGBUS); with room again, tea resume finishes it',
  async () => {
    const s = scratch({ 'agent.yaml': AGENT })
    const mnt = join(s.dir, 'disk')
    mkdirSync(mnt)
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt])
    try {
      writeFileSync(join(s.dir, 'agent.yaml'), AGENT)
      const full = await tea(['run', s.path('agent.yaml'), '--data-dir', join(mnt, 'data'), '--run-id', 'f', '-q'], { timeoutMs: 60_000 })
      assert.is(full.code, 1, full.stderr)
      assert.match(full.stderr, 'STORE_FULL')
      assert.match(full.stderr, 'is full')
      // LMDB's C code prints its low-level failure (mdb_page_spill error 5) to stderr first; tea's own report
      // follows, with the resume hint, and the process ends by itself (no uncaught exception).
      assert.match(full.stderr, 'tea: run f failed: [STORE_FULL]')
      assert.match(full.stderr, 'tea resume f')
      assert.not.match(full.stderr, 'internal error')
      assert.not.match(full.stderr, 'Uncaught')
      noStack(full)

      // 28-11 (probe 2, K): every command on the full disk ends with a coded message and no stack frame — lmdb's
      // own print of the failed commit included — and none dies of SIGBUS beginning a new store there.
      const data = join(mnt, 'data')
      const again = await tea(['resume', 'f', '--data-dir', data, '-q'], { timeoutMs: 60_000 })
      assert.is(again.code, 1, again.stderr)
      assert.match(again.stderr, '[STORE_FULL]')
      noStack(again)
      const listed = await tea(['runs', '--data-dir', data])
      assert.is(listed.code, 0, listed.stderr)
      assert.match(listed.stdout, /^f\s+failed/m)
      for (const args of [
        ['run', s.path('agent.yaml'), '--data-dir', join(mnt, 'fresh'), '-q'],
        ['run', s.path('agent.yaml'), '--data-dir', join(mnt, 'fresh'), '-q'],
        ['serve', '--data-dir', join(mnt, 'fresh-serve'), '--listen', '127.0.0.1:0'],
      ]) {
        const r = await tea(args, { timeoutMs: 60_000 })
        assert.is(r.signal, null, `${args[0]} died of ${r.signal}`)
        assert.is(r.code, 1, r.stderr)
        assert.match(r.stderr, 'STORE_FULL')
        noStack(r)
      }

      execFileSync('mount', ['-o', 'remount,size=64m', mnt])
      const resumed = await tea(['resume', 'f', '--data-dir', join(mnt, 'data'), '-q'], { timeoutMs: 60_000 })
      assert.is(resumed.code, 0, resumed.stderr)
      assert.equal(Object.keys(JSON.parse(resumed.stdout)).length, 12)
    } finally {
      execFileSync('umount', [mnt])
      s.cleanup()
    }
  },
)

/** No stack frame and no uncoded lmdb error on stderr (LMDB's C-level `mdb_page_spill error 5` line may precede). */
function noStack(r: { stderr: string }): void {
  assert.not.match(r.stderr, /^\s+at /m)
  assert.not.match(r.stderr, 'Input/output error')
  assert.not.match(r.stderr, /\{ code: -?\d+ \}/)
}

t.run()
