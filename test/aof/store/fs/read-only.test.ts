/**
 * Issue 9, probe defect D8: on a read-only data dir, AOF writers fail with STORE_NOT_WRITABLE naming the path and
 * saying what to do (`aof task create` was an internal error with a stack: Node's recursive mkdir reports ENOENT
 * on a read-only file system), and readers keep working.
 *
 * Read-only for real: a tmpfs remounted `ro`. File modes would not do — the tests may run as root, which ignores
 * them. Where mounting is not allowed (not root, no CAP_SYS_ADMIN) the tests are skipped with the reason.
 */

import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  type AofContext,
  acquireLease,
  aofContext,
  createTask,
  getTask,
  initDataDir,
  lintDataDir,
  listTasks,
  transitionTask,
} from '../../../../src/aof/index.ts'
import { isTeaError } from '../../../../src/core/errors.ts'
import { skipIf } from '../../../support/skip.ts'
import { MISSING, T1 } from '../../helpers.ts'
import { tempDir } from '../../../support/temp-dir.ts'

const NOW = () => new Date('2026-02-10T10:00:00.000Z')

function run(cmd: string, args: string[]): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8' })
  if (r.error) return `${cmd}: ${r.error.message}`
  return r.status === 0 ? undefined : `${cmd} ${args.join(' ')}: ${r.stderr.trim() || `exit ${r.status}`}`
}

/** Whether this machine lets the test mount a tmpfs (the reason it does not, else false). */
function cannotMount(): string | false {
  const probe = tempDir('tea-aof-ro-probe-')
  try {
    const failed = run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe])
    if (failed) return `cannot mount a tmpfs to make a read-only data dir (${failed})`
    run('umount', [probe])
    return false
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}

const skip = cannotMount()
const mountPoint = tempDir('tea-aof-ro-')
let ctx: AofContext

test.before(async () => {
  if (skip) return
  const failed = run('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint])
  if (failed) throw new Error(failed)
  ctx = aofContext(join(mountPoint, 'data'), { now: NOW, lock: { timeoutMs: 2_000 } })
  initDataDir(ctx)
  await createTask(ctx, { id: T1, title: 'written before the remount', status: 'ready', agent: 'swe-backend' })
  const ro = run('mount', ['-o', 'remount,ro', mountPoint])
  if (ro) throw new Error(ro)
})

test.after(() => {
  if (!skip) run('umount', [mountPoint])
  rmSync(mountPoint, { recursive: true, force: true })
})

function assertNotWritable(e: unknown, what: string, under = join(mountPoint, 'data')): void {
  assert.ok(isTeaError(e, 'STORE_NOT_WRITABLE'), `${what}: expected STORE_NOT_WRITABLE, got ${String(e)}`)
  assert.match(e.message, `cannot write ${under}`, what)
  assert.match(e.message, 'the file system is read-only (EROFS)', what)
  assert.match(e.hint ?? '', '--data-dir', what)
  assert.is(e.details?.errno, 'EROFS', what)
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => assert.unreachable('expected a rejection'),
    (e: unknown) => e,
  )
}

skipIf(test, skip, 'task create on a read-only data dir is STORE_NOT_WRITABLE with the path and a hint', async () => {
  assertNotWritable(await rejection(createTask(ctx, { title: 'new' })), 'create')
})

skipIf(test, skip, 'a data dir that does not exist yet, under a read-only mount: the real cause, not ENOENT', async () => {
  const fresh = aofContext(join(mountPoint, 'not-yet'), { now: NOW })
  assertNotWritable(await rejection(createTask(fresh, { title: 'new' })), 'create in a missing dir', join(mountPoint, 'not-yet'))
  assert.throws(
    () => initDataDir(fresh),
    (e: unknown) => isTeaError(e, 'STORE_NOT_WRITABLE') && e.details?.errno === 'EROFS',
  )
})

skipIf(test, skip, 'move and lease are STORE_NOT_WRITABLE, and the task is left as it was', async () => {
  const before = readFileSync(join(mountPoint, 'data', 'tasks', 'ready', `${T1}.md`), 'utf8')
  assertNotWritable(await rejection(transitionTask(ctx, T1, 'blocked', { actor: 'test' })), 'move')
  assertNotWritable(await rejection(acquireLease(ctx, T1, 'swe-backend')), 'lease')
  assert.is(readFileSync(join(mountPoint, 'data', 'tasks', 'ready', `${T1}.md`), 'utf8'), before)
})

skipIf(test, skip, 'readers keep working: list, show (also of a missing task, which needs no lock there) and lint', async () => {
  const { tasks, problems } = listTasks(ctx)
  assert.equal(
    tasks.map((t) => [t.id, t.status]),
    [[T1, 'ready']],
  )
  assert.equal(problems, [])
  assert.is((await getTask(ctx, T1))?.status, 'ready')
  assert.is(await getTask(ctx, MISSING), undefined)
  assert.equal(lintDataDir(ctx), [])
})

test.run()
