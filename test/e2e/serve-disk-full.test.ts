/**
 * `tea serve` when the data dir fills up during a run (issue 16): the run fails with STORE_FULL and stays
 * resumable, the daemon stays up and answers; once the disk has room, resuming through the API finishes the run.
 * The data dir is a 2 MiB tmpfs; needs root to mount, skipped with the reason where mounting is impossible.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { skipIf } from '../support/skip.ts'
import { cannotMountTmpfs, scratch } from './cli.ts'
import { startServe } from './serve-harness.ts'

const t = suite('tea serve on a full disk')

const AGENT = `name: fill
nodes:
${Array.from({ length: 12 }, (_, i) => `  - name: n${i + 1}\n    run: "return { n${i + 1}: 'x'.repeat(400000) }"`).join('\n')}
`

skipIf(
  t,
  cannotMountTmpfs(),
  '16 serve: a full data dir fails the run resumable (STORE_FULL); the daemon stays up and refuses runs until restarted; with room, resume finishes it',
  async () => {
    const s = scratch()
    mkdirSync(s.path('agents'))
    writeFileSync(s.path('agents/fill.yaml'), AGENT)
    const mnt = join(s.dir, 'disk')
    mkdirSync(mnt)
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt])
    const d = await startServe(['--data-dir', join(mnt, 'data'), '--agents', s.path('agents')])
    try {
      assert.is((await d.json('POST', '/api/runs', { agent: 'fill', run_id: 'f' })).status, 201)
      const events = await d.events('f')
      const last = events.at(-1)!
      assert.is(last.type, 'error', JSON.stringify(last).slice(0, 300))
      assert.is(last.error.code, 'STORE_FULL')
      assert.is((await d.json('GET', '/api/health')).status, 200, 'the daemon is still up')
      assert.match(d.stderr(), /run f failed: \[STORE_FULL\]/)
      // lmdb is not trusted again in this process after a failed commit: runs are refused until a restart.
      const refused = await d.json('POST', '/api/runs/f/resume', {})
      assert.is(refused.status, 503)
      assert.is(refused.body.error.code, 'STORE_FULL')
      assert.match(refused.body.error.hint, /restart tea serve/)
      assert.is((await d.json('GET', '/api/runs/f')).body.status, 'failed')
      assert.is(await d.stop(), 0)
      execFileSync('mount', ['-o', 'remount,size=64m', mnt])
      const next = await startServe(['--data-dir', join(mnt, 'data'), '--agents', s.path('agents')])
      try {
        assert.is((await next.json('POST', '/api/runs/f/resume', {})).status, 202)
        const resumed = await next.events('f')
        assert.is(resumed.at(-1)!.type, 'complete', `${JSON.stringify(resumed.at(-1)).slice(0, 300)}\n${next.stderr()}`)
        assert.is(Object.keys(resumed.at(-1)!.state).length, 12)
      } finally {
        await next.stop()
      }
    } finally {
      await d.stop()
      execFileSync('umount', [mnt])
      s.cleanup()
    }
  },
)

t.run()
