import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { cacheDir, isNoexec, mountOptions } from '../../src/sea/cache-dir.ts'
import { materialise } from '../../src/sea/materialise.ts'
import { tempDir } from '../support/temp-dir.ts'

const tmp = tempDir('tea-cache-test-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

test('cache dir: TEA_CACHE_DIR wins over XDG_CACHE_HOME and HOME', () => {
  assert.is(cacheDir({ TEA_CACHE_DIR: '/a/b', XDG_CACHE_HOME: '/x', HOME: '/h' }), '/a/b')
  assert.is(cacheDir({ XDG_CACHE_HOME: '/x', HOME: '/h' }), '/x/tea')
  assert.is(cacheDir({ HOME: '/h' }), '/h/.cache/tea')
})

test('materialise writes the bytes once, content-addressed, executable, and reuses the file', () => {
  const bytes = new TextEncoder().encode('hello addon')
  const a = materialise('native', 'lmdb.node', bytes, tmp)
  assert.ok(a.startsWith(join(tmp, 'native')))
  assert.ok(a.endsWith('/lmdb.node'))
  assert.is(readFileSync(a, 'utf8'), 'hello addon')
  assert.is(statSync(a).mode & 0o111, 0o111)
  const mtime = statSync(a).mtimeMs
  assert.is(materialise('native', 'lmdb.node', bytes, tmp), a)
  assert.is(statSync(a).mtimeMs, mtime)
  const b = materialise('native', 'lmdb.node', new TextEncoder().encode('other addon'), tmp)
  assert.is.not(b, a)
})

test('materialise into an unusable cache dir is a CACHE_DIR_UNUSABLE error naming TEA_CACHE_DIR', () => {
  const file = join(tmp, 'not-a-dir')
  writeFileSync(file, 'x')
  try {
    materialise('js', 'tea.cjs', new Uint8Array([1, 2, 3]), join(file, 'cache'))
    assert.unreachable('should have thrown')
  } catch (e) {
    assert.ok(isTeaError(e, 'CACHE_DIR_UNUSABLE'), String(e))
    assert.match((e as Error).message, join(file, 'cache'))
    assert.match((e as { hint: string }).hint, 'TEA_CACHE_DIR')
  }
})

const MOUNTS = [
  'proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0',
  '/dev/root / ext4 rw,relatime 0 0',
  'tmpfs /tmp tmpfs rw,nosuid,nodev,noexec 0 0',
  'tmpfs /tmp/exec\\040ok tmpfs rw,nosuid 0 0',
  '/dev/sda1 /home ext4 rw 0 0',
].join('\n')

test('mount options come from the longest mount point containing the path, with octal escapes decoded', () => {
  assert.equal(mountOptions('/tmp/x/y', MOUNTS)?.mountPoint, '/tmp')
  assert.equal(mountOptions('/tmp/exec ok/c', MOUNTS)?.mountPoint, '/tmp/exec ok')
  assert.equal(mountOptions('/home/pi/.cache/tea', MOUNTS)?.mountPoint, '/home')
  assert.equal(mountOptions('/tmpfoo', MOUNTS)?.mountPoint, '/')
})

test('noexec is detected per mount', () => {
  assert.is(isNoexec('/tmp/tea/native/lmdb.node', MOUNTS), true)
  assert.is(isNoexec('/tmp/exec ok/lmdb.node', MOUNTS), false)
  assert.is(isNoexec('/home/pi/.cache/tea/lmdb.node', MOUNTS), false)
})

test.run()
