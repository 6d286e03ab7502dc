import { existsSync, rmSync, writeFileSync, utimesSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { withFileLock } from '../../../../src/aof/index.ts'
import { tempDir } from '../../../support/temp-dir.ts'

function tmp() {
  return tempDir('tea-lock-')
}

test('the lock serialises critical sections and is removed afterwards', async () => {
  const dir = tmp()
  try {
    const path = join(dir, 'locks', 'x.lock')
    let inside = 0
    let maxInside = 0
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withFileLock(path, {}, async () => {
          inside++
          maxInside = Math.max(maxInside, inside)
          await new Promise((r) => setImmediate(r))
          inside--
        }),
      ),
    )
    assert.is(maxInside, 1)
    assert.not.ok(existsSync(path))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a lock left by a dead process on this host is taken over', async () => {
  const dir = tmp()
  try {
    const path = join(dir, 'x.lock')
    // A pid that has certainly exited: a child we ran to completion.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!
    writeFileSync(path, JSON.stringify({ pid: dead, host: hostname(), at: Date.now(), token: 'old' }))
    const v = await withFileLock(path, { timeoutMs: 2000 }, () => 'got it')
    assert.is(v, 'got it')
    assert.not.ok(existsSync(path))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a lock from another host is broken only once it is older than staleMs', async () => {
  const dir = tmp()
  try {
    const path = join(dir, 'x.lock')
    writeFileSync(path, JSON.stringify({ pid: 1, host: 'other-board', at: Date.now(), token: 'fresh' }))
    try {
      await withFileLock(path, { timeoutMs: 100, staleMs: 60_000 }, () => 'no')
      assert.unreachable('a fresh foreign lock must be respected')
    } catch (e) {
      assert.is((e as { code: string }).code, 'AOF_LOCKED')
      assert.match((e as Error).message, 'other-board')
    }
    writeFileSync(path, JSON.stringify({ pid: 1, host: 'other-board', at: Date.now() - 120_000, token: 'stale' }))
    assert.is(await withFileLock(path, { timeoutMs: 1000, staleMs: 60_000 }, () => 'yes'), 'yes')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('an empty lock file (creator died before writing) is broken once it is old', async () => {
  const dir = tmp()
  try {
    const path = join(dir, 'x.lock')
    writeFileSync(path, '')
    const old = (Date.now() - 10_000) / 1000
    utimesSync(path, old, old)
    assert.is(await withFileLock(path, { timeoutMs: 1000 }, () => 1), 1)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the lock is released when the critical section throws', async () => {
  const dir = tmp()
  try {
    const path = join(dir, 'x.lock')
    try {
      await withFileLock(path, {}, () => {
        throw new Error('boom')
      })
    } catch (e) {
      assert.is((e as Error).message, 'boom')
    }
    assert.not.ok(existsSync(path))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
