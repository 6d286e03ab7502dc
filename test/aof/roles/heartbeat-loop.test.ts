import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readHeartbeat, startHeartbeat, transitionTask } from '../../../src/aof/index.ts'
import { fsTaskStore } from '../../../src/aof/store/fs/store.ts'
import { T1, fixture, makeTask } from '../helpers.ts'

test('startHeartbeat refreshes the heartbeat on its interval and stops cleanly', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    const loop = startHeartbeat(fsTaskStore(f.ctx), { taskId: T1, agentId: 'swe-backend', intervalMs: 10, ttlMs: 60_000 })
    for (let i = 0; i < 200 && (readHeartbeat(f.ctx, T1)?.beatCount ?? 0) < 3; i++) await new Promise((r) => setTimeout(r, 10))
    await loop.stop()
    const count = readHeartbeat(f.ctx, T1)!.beatCount
    assert.ok(count >= 3, `beatCount ${count}`)
    await new Promise((r) => setTimeout(r, 40))
    assert.is(readHeartbeat(f.ctx, T1)!.beatCount, count)
    assert.ok(loop.stopped)
    await loop.stop()
  } finally {
    f.cleanup()
  }
})

test('the loop stops and reports when the run is lost', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    let lost = ''
    const loop = startHeartbeat(fsTaskStore(f.ctx), {
      taskId: T1,
      agentId: 'swe-backend',
      intervalMs: 60_000,
      onLost: (r) => void (lost = r),
    })
    assert.is(await loop.beat(), true)
    await transitionTask(f.ctx, T1, 'ready', { actor: 'scheduler' })
    assert.is(await loop.beat(), false)
    assert.ok(loop.stopped)
    assert.match(lost, 'does not hold a live run')
    await loop.stop()
  } finally {
    f.cleanup()
  }
})

test('a heartbeat extends the lease once less than half of it is left', async () => {
  const f = fixture()
  try {
    const t = await makeTask(f.ctx, { id: T1 })
    const lease0 = t.data.lease as { expiresAt: string }
    const loop = startHeartbeat(fsTaskStore(f.ctx), { taskId: T1, agentId: 'swe-backend', intervalMs: 60_000 })
    f.advance(60_000)
    await loop.beat()
    const { getTask } = await import('../../../src/aof/index.ts')
    assert.is(((await getTask(f.ctx, T1))!.data.lease as { expiresAt: string }).expiresAt, lease0.expiresAt)
    f.advance(300_000)
    await loop.beat()
    assert.is(((await getTask(f.ctx, T1))!.data.lease as { expiresAt: string }).expiresAt, '2026-02-10T10:16:00.000Z')
    await loop.stop()
  } finally {
    f.cleanup()
  }
})

test.run()
