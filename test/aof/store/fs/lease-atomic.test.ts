/**
 * Issue 9, probe defect D7: a lease is all or nothing. Durations are checked before any file is touched
 * (`--ttl-ms 1e99` was a RangeError with a stack after the task had moved), and a lease whose later write fails
 * takes its earlier writes back: the task stays where it was, byte for byte, with no run.json, heartbeat, lease or
 * event left behind. Failures are injected as a file system would produce them: a folder standing where a file is
 * about to be renamed makes exactly that write fail.
 */

import { lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  MAX_TTL_MS,
  acquireLease,
  checkTtlMs,
  heartbeat,
  initDataDir,
  poll,
  startHeartbeat,
  transitionTask,
} from '../../../../src/aof/index.ts'
import { fsTaskStore } from '../../../../src/aof/store/fs/store.ts'
import { claimNextTask } from '../../../../src/aof/roles/worker-claim.ts'
import { isTeaError } from '../../../../src/core/errors.ts'
import { T1, type Fixture, makeTask, withFixture } from '../../helpers.ts'

/** Every file and folder under the data dir with its content, except lock files (a lock is taken and released). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name)
      const rel = relative(dir, path)
      if (rel.startsWith('locks/')) continue
      if (lstatSync(path).isDirectory()) {
        out[`${rel}/`] = ''
        walk(path)
      } else out[rel] = readFileSync(path, 'utf8')
    }
  }
  walk(dir)
  return out
}

/** A non-empty folder at `path`: renaming a file onto it fails (EISDIR), so the write meant for `path` fails. */
function blockWith(path: string): void {
  mkdirSync(join(path, 'in-the-way'), { recursive: true })
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => assert.unreachable('expected a rejection'),
    (e: unknown) => e,
  )
}

const BAD_TTLS = [1e99, 0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_TTL_MS + 1]

test(
  'a lease with a TTL outside 1 ms … 30 days is USAGE before any file is touched',
  withFixture(async (f) => {
    const before = await readyTask(f)
    for (const bad of BAD_TTLS) {
      for (const options of [{ ttlMs: bad }, { heartbeatTtlMs: bad }]) {
        const e = await rejection(acquireLease(f.ctx, T1, 'swe-backend', options))
        assert.ok(isTeaError(e, 'USAGE'), `${JSON.stringify(options)}: ${String(e)}`)
        assert.match(e.message, 'expects a whole number of milliseconds from 1 to 2592000000 (30 days)')
        assert.equal(tree(f.dir), before, `${JSON.stringify(options)} left the data dir as it was`)
      }
    }
    assert.throws(() => checkTtlMs('--ttl-ms', 1e99), /--ttl-ms expects a whole number of milliseconds .* received 1e\+99/)
  }),
)

test(
  'the range ends are accepted: 1 ms and 30 days',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const r = await acquireLease(f.ctx, T1, 'swe-backend', { ttlMs: MAX_TTL_MS, heartbeatTtlMs: 1 })
    assert.is(r.task.status, 'in-progress')
    assert.is(
      (r.task.data.lease as { expiresAt: string }).expiresAt,
      new Date(Date.parse('2026-02-10T10:00:00.000Z') + MAX_TTL_MS).toISOString(),
    )
    assert.is(r.heartbeat.expiresAt, '2026-02-10T10:00:00.001Z')
  }),
)

test(
  'heartbeat, poll, the heartbeat loop and the worker claim check their durations the same way',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const hbBefore = readFileSync(join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json'), 'utf8')
    for (const bad of BAD_TTLS) {
      assert.ok(isTeaError(await rejection(heartbeat(f.ctx, T1, 'swe-backend', { ttlMs: bad })), 'USAGE'), `heartbeat ${bad}`)
      assert.ok(isTeaError(await rejection(poll(f.ctx, { heartbeatTtlMs: bad })), 'USAGE'), `poll ${bad}`)
      assert.ok(
        isTeaError(await rejection(claimNextTask(fsTaskStore(f.ctx), 'swe-backend', { leaseTtlMs: bad })), 'USAGE'),
        `claim lease ${bad}`,
      )
      assert.ok(
        isTeaError(await rejection(claimNextTask(fsTaskStore(f.ctx), 'swe-backend', { heartbeatTtlMs: bad })), 'USAGE'),
        `claim hb ${bad}`,
      )
      assert.throws(
        () => startHeartbeat(fsTaskStore(f.ctx), { taskId: T1, agentId: 'swe-backend', ttlMs: bad }),
        (e: unknown) => isTeaError(e, 'USAGE'),
      )
    }
    // A timer cannot wait longer than 2^31 - 1 ms: a longer interval would fire at once, over and over.
    assert.throws(
      () => startHeartbeat(fsTaskStore(f.ctx), { taskId: T1, agentId: 'swe-backend', intervalMs: 2 ** 31 }),
      (e: unknown) => isTeaError(e, 'USAGE'),
    )
    assert.is(readFileSync(join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json'), 'utf8'), hbBefore, 'no heartbeat was written')
  }),
)

/** A ready task in an initialised data dir (every standard folder exists), and the data dir as it is then. */
async function readyTask(f: Fixture): Promise<Record<string, string>> {
  initDataDir(f.ctx)
  await makeTask(f.ctx, { id: T1, status: 'ready' })
  return tree(f.dir)
}

test(
  'the heartbeat write fails after run.json was written: run.json is taken back, the task stays ready',
  withFixture(async (f) => {
    await readyTask(f)
    blockWith(join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json'))
    const before = tree(f.dir)
    const e = await rejection(acquireLease(f.ctx, T1, 'swe-backend'))
    assert.ok(isTeaError(e, 'STORE_ERROR'), String(e))
    assert.match(e.message, `cannot write ${join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json')}`)
    assert.equal(tree(f.dir), before)
  }),
)

test(
  'a task leased before: a failed new lease restores the earlier run.json and heartbeat byte for byte',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await transitionTask(f.ctx, T1, 'ready', { actor: 'test', reason: 'reclaimed' })
    f.advance(60_000)
    // The move to in-progress fails (a folder where the task file goes), after run.json and the heartbeat were written.
    blockWith(join(f.dir, 'tasks', 'in-progress', `${T1}.md`))
    const before = tree(f.dir)
    const e = await rejection(acquireLease(f.ctx, T1, 'swe-qa'))
    assert.ok(isTeaError(e, 'STORE_ERROR'), String(e))
    assert.equal(tree(f.dir), before)
  }),
)

/** Runs `fn` while the day's event log is a folder (so every append fails), then puts the log back. */
async function withBlockedLog(f: Fixture, fn: () => Promise<void>): Promise<void> {
  const log = join(f.dir, 'events', '2026-02-10.jsonl')
  renameSync(log, `${log}.saved`)
  blockWith(log)
  try {
    await fn()
  } finally {
    rmSync(log, { recursive: true })
    renameSync(`${log}.saved`, log)
  }
}

test(
  'the events fail to append (the commit point): the move, run.json and heartbeat are all taken back',
  withFixture(async (f) => {
    const before = await readyTask(f)
    await withBlockedLog(f, async () => {
      const e = await rejection(acquireLease(f.ctx, T1, 'swe-backend'))
      assert.ok(isTeaError(e, 'AOF_INVALID'), String(e))
      assert.match(e.message, 'the event log is a folder')
    })
    assert.equal(tree(f.dir), before, 'the task is in ready/ with its companion folder, no run, no lease, no event')
  }),
)

test(
  'a renewal whose event fails takes back the heartbeat and the lease extension',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    f.advance(1000)
    const before = tree(f.dir)
    await withBlockedLog(f, async () => {
      const e = await rejection(acquireLease(f.ctx, T1, 'swe-backend'))
      assert.ok(isTeaError(e, 'AOF_INVALID'), String(e))
      assert.match(e.message, 'the event log is a folder')
    })
    assert.equal(tree(f.dir), before)
    const renewed = await acquireLease(f.ctx, T1, 'swe-backend')
    assert.is(renewed.renewed, true, 'with the log back, the same renewal goes through')
  }),
)

test(
  'a plain move whose event fails is undone: the task stays in its folder with its companion folder',
  withFixture(async (f) => {
    const before = await readyTask(f)
    await withBlockedLog(f, async () => {
      const e = await rejection(transitionTask(f.ctx, T1, 'blocked', { actor: 'test' }))
      assert.ok(isTeaError(e, 'AOF_INVALID'), String(e))
    })
    assert.equal(tree(f.dir), before)
  }),
)

test.run()
