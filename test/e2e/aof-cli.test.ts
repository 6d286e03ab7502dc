/**
 * `tea aof …` from the built bundle, as a user runs it (`node dist/linux-x64/tea.cjs aof …`; `npm test` builds it
 * first).
 */

import { spawnSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tempDir } from '../support/temp-dir.ts'
import { BUNDLE, bundleEnv } from './cli.ts'

function tea(args: string[], input = '', env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BUNDLE, 'aof', ...args], {
    input,
    encoding: 'utf8',
    timeout: 30_000,
    env: bundleEnv({ TEA_DATA_DIR: '', ...env }),
  })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

test('the bundle has the aof command', () => {
  assert.ok(existsSync(BUNDLE), `${BUNDLE} is missing: node build.mjs --target linux-x64`)
  const help = tea(['--help'])
  assert.is(help.code, 0, help.err)
})

test('tea aof (bundle): create → lease → send → show → events → lint, and exit codes', () => {
  const dir = tempDir('tea-aof-bundle-')
  try {
    const d = ['--data-dir', dir]
    assert.is(tea(['init', ...d]).code, 0)
    const created = tea(['task', 'create', '--title', 'Bundle task', '--agent', 'swe', '--status', 'ready', ...d])
    assert.is(created.code, 0, created.err)
    const id = created.out.trim()
    assert.is(JSON.parse(tea(['lease', id, '--agent', 'swe', ...d]).out).status, 'in-progress')
    const env = {
      protocol: 'aof',
      version: 1,
      type: 'status.update',
      taskId: id,
      fromAgent: 'swe',
      toAgent: 'o',
      sentAt: new Date(Date.now() + 1000).toISOString(),
      payload: { taskId: id, agentId: 'swe', progress: 'from the bundle' },
    }
    const sent = tea(['send', '-', ...d], `AOF/1 ${JSON.stringify(env)}`)
    assert.equal([sent.code, JSON.parse(sent.out).outcome], [0, 'accepted'])
    const rejected = tea(['send', ...d], 'AOF/1 {broken')
    assert.equal([rejected.code, JSON.parse(rejected.out).reason], [0, 'invalid_json'])
    assert.match(tea(['task', 'show', id, ...d]).out, 'Progress: from the bundle')
    assert.ok(
      tea(['events', '--task', id, ...d])
        .out.split('\n')
        .filter(Boolean).length >= 3,
    )
    assert.is(tea(['task', 'move', id, 'done', ...d]).code, 1)
    assert.is(tea(['task', 'show', 'TASK-../../etc', ...d]).code, 2)
    assert.is(tea(['lint', ...d]).code, 0)
    assert.is(JSON.parse(tea(['poll', '--dry-run', ...d]).out).dryRun, true)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
