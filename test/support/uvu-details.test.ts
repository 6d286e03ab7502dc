/**
 * The uvu preload (uvu-details.ts) keeps a test that fails with a TeaError failing visibly: uvu without it swallowed
 * the failure and exited 0. Both ways are run on a fixture whose first test throws a TeaError with `details`.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '../..')

function uvu(...preloads: string[]): { status: number | null; out: string } {
  const args = [
    join(root, 'node_modules/uvu/bin.js'),
    '-r',
    'tsx',
    ...preloads.flatMap((p) => ['-r', p]),
    join(here, 'fixtures'),
    '^fails-with-tea-error\\.ts$',
  ]
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } })
  return { status: r.status, out: `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '') }
}

test('with the preload, a test failing with a TeaError fails: exit 1, its message and details printed, later tests run', () => {
  const r = uvu(join(here, 'uvu-details.ts'))
  assert.is(r.status, 1, r.out)
  assert.match(r.out, 'deliberate failure')
  assert.match(r.out, '"marker": "details-printed"')
  assert.match(r.out, /Passed:\s+1/)
})

test('without it, uvu 0.5 loses that failure (why the preload exists; if this fails, uvu was fixed and the preload can go)', () => {
  const r = uvu()
  assert.is(r.status, 0, r.out)
  assert.not.match(r.out, 'deliberate failure')
})

test.run()
