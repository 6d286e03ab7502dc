/**
 * The task-store contract (docs/fleet.md, STYLE.md point 10): what every adapter of `TaskStore` must do, stated
 * once. `store-fs.test.ts` runs it on the filesystem store, `test/aof/nats/store.test.ts` on the JetStream store
 * against a real nats-server. Expiry is waited for by the store's own clock (short TTLs, then polling `now()`), never
 * by a fixed sleep, so a loaded machine only makes the test slower.
 */

import { reclaimExpired, schedulerPass } from '../../../src/aof/roles/scheduler-pass.ts'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../../src/core/errors.ts'
import type { TaskStore } from '../../../src/aof/store/port.ts'
import { taskLease } from '../../../src/aof/protocol/task-file.ts'
import { completionFromState } from '../../../src/aof/protocol/worker-completion.ts'
import { reportCompletion } from '../../../src/aof/roles/worker-report.ts'

export interface StoreHandle {
  store: TaskStore
  /** A second, independent handle on the same store (another process or board would open its own). */
  other(): Promise<TaskStore>
  cleanup(): Promise<void>
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (e) {
    return isTeaError(e) ? e.code : `untyped: ${String(e)}`
  }
  return 'no error'
}

async function untilExpired(store: TaskStore, iso: string): Promise<void> {
  const at = Date.parse(iso)
  while ((await store.now()).getTime() <= at) await new Promise((r) => setTimeout(r, 5))
}

/** `teardown` runs once after the last test (a shared server's stop). */
export function storeContract(name: string, open: () => Promise<StoreHandle>, teardown?: () => Promise<void>): void {
  const t = suite<{ h: StoreHandle }>(`task store contract: ${name}`)
  if (teardown) t.after(teardown)
  t.before.each(async (ctx) => {
    ctx.h = await open()
  })
  t.after.each(async (ctx) => {
    await ctx.h.cleanup()
  })

  t('a created task reads back with its title, body, routing and status, and is listed under that status', async ({ h }) => {
    const task = await h.store.create({ title: 'Calibrate', body: 'Read the sensor.', agent: 'swe', status: 'ready' })
    const got = await h.store.get(task.id)
    assert.ok(got)
    assert.is(got.status, 'ready')
    assert.is(got.data.title, 'Calibrate')
    assert.is(got.body, 'Read the sensor.')
    assert.equal(got.data.routing, { agent: 'swe', tags: [] })
    const listed = await h.store.list(['ready'])
    assert.equal(
      listed.tasks.map((x) => x.id),
      [task.id],
    )
    assert.equal((await h.store.list(['backlog'])).tasks, [])
    assert.equal(listed.problems, [])
  })

  t('a missing task reads as undefined; moving it is AOF_NOT_FOUND', async ({ h }) => {
    assert.is(await h.store.get('TASK-2026-02-09-999'), undefined)
    assert.is(await codeOf(h.store.transition('TASK-2026-02-09-999', 'ready', { actor: 't' })), 'AOF_NOT_FOUND')
  })

  t('a fixed id that exists is refused (AOF_INVALID): two creators never share an id', async ({ h }) => {
    await h.store.create({ title: 'one', id: 'TASK-2026-02-09-001' })
    assert.is(await codeOf(h.store.create({ title: 'two', id: 'TASK-2026-02-09-001' })), 'AOF_INVALID')
    assert.is((await h.store.get('TASK-2026-02-09-001'))?.data.title, 'one')
  })

  t('transitions follow the AOF/1 table and are logged once as task.transitioned', async ({ h }) => {
    const task = await h.store.create({ title: 'x', status: 'ready' })
    assert.is(await codeOf(h.store.transition(task.id, 'done', { actor: 't' })), 'AOF_TRANSITION')
    const moved = await h.store.transition(task.id, 'blocked', { actor: 'ops', reason: 'waiting' })
    assert.is(moved.status, 'blocked')
    assert.is((await h.store.get(task.id))?.status, 'blocked')
    const events = (await h.store.readEvents({ taskId: task.id, type: 'task.transitioned' })).map((e) => [e.actor, e.payload])
    assert.equal(events, [['ops', { from: 'ready', to: 'blocked', reason: 'waiting' }]])
  })

  t('concurrent updates from two handles are never lost', async ({ h }) => {
    const task = await h.store.create({ title: 'counter', metadata: { n: 0 } })
    const other = await h.other()
    const bump = (s: TaskStore) => s.update(task.id, (x) => void ((x.data.metadata as { n: number }).n += 1))
    await Promise.all(Array.from({ length: 12 }, (_, i) => bump(i % 2 ? other : h.store)))
    assert.is(((await h.store.get(task.id))?.data.metadata as { n: number }).n, 12)
  })

  t('of many agents leasing one ready task at once, exactly one wins; the others get AOF_LOCKED', async ({ h }) => {
    const task = await h.store.create({ title: 'claim me', status: 'ready' })
    const other = await h.other()
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => codeOf((i % 2 ? other : h.store).lease(task.id, `agent-${i}`, { ttlMs: 60_000 }))),
    )
    assert.is(results.filter((r) => r === 'no error').length, 1, results.join(', '))
    assert.ok(
      results.every((r) => r === 'no error' || r === 'AOF_LOCKED'),
      results.join(', '),
    )
    const got = await h.store.get(task.id)
    assert.is(got?.status, 'in-progress')
    const winner = `agent-${results.indexOf('no error')}`
    assert.is(got && taskLease(got)?.agent, winner)
    assert.is((await h.store.readRun(task.id))?.agentId, winner)
    assert.is((await h.store.readEvents({ taskId: task.id, type: 'lease.acquired' })).length, 1)
  })

  t('of many processes of one agent id leasing one ready task at once, one starts a run; the others see it renewed', async ({ h }) => {
    const task = await h.store.create({ title: 'claim me', agent: 'swe', status: 'ready' })
    const other = await h.other()
    const leases = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 2 ? other : h.store).lease(task.id, 'swe', { ttlMs: 60_000 })),
    )
    // 24 at once: enough that, before a lease named its run, one of them took the task afresh (two runs of it).
    assert.is(leases.filter((l) => !l.renewed).length, 1)
    const runIds = new Set(leases.map((l) => l.run.runId))
    assert.equal([...runIds], [(await h.store.readRun(task.id))?.runId], 'one run, the one every process was told of')
    assert.is((await h.store.readEvents({ taskId: task.id, type: 'lease.acquired' })).length, 1)
  })

  t('the lease holder renews and beats; anyone else is refused; leaving in-progress clears the lease', async ({ h }) => {
    const task = await h.store.create({ title: 'x', status: 'ready' })
    const first = await h.store.lease(task.id, 'a', { ttlMs: 60_000 })
    assert.is(first.renewed, false)
    const again = await h.store.lease(task.id, 'a', { ttlMs: 60_000 })
    assert.is(again.renewed, true)
    assert.is(again.run.runId, first.run.runId)
    const hb = await h.store.heartbeat(task.id, 'a', { ttlMs: 60_000 })
    assert.is(hb.runId, first.run.runId)
    assert.is(hb.beatCount, 2)
    assert.is(await codeOf(h.store.heartbeat(task.id, 'b')), 'AOF_LOCKED')
    assert.is(await codeOf(h.store.lease(task.id, 'b')), 'AOF_LOCKED')
    assert.is(await codeOf(h.store.transition(task.id, 'review', { actor: 'b', leasedTo: 'b' })), 'AOF_LOCKED')
    const done = await h.store.transition(task.id, 'review', { actor: 'a', leasedTo: 'a' })
    assert.is(done.data.lease, undefined)
    assert.is(await codeOf(h.store.heartbeat(task.id, 'a')), 'AOF_LOCKED')
  })

  t('a run whose heartbeat expired is reclaimed to ready exactly once, even by two schedulers at once', async ({ h }) => {
    const task = await h.store.create({ title: 'x', status: 'ready' })
    const lease = await h.store.lease(task.id, 'a', { ttlMs: 60_000, heartbeatTtlMs: 1 })
    const live = await h.store.create({ title: 'live', status: 'ready' })
    await h.store.lease(live.id, 'b', { ttlMs: 60_000, heartbeatTtlMs: 600_000 })
    await untilExpired(h.store, lease.heartbeat.expiresAt!)
    const other = await h.other()
    const [one, two] = await Promise.all([reclaimExpired(h.store), reclaimExpired(other)])
    const all = [...one, ...two]
    assert.equal(
      all.map((r) => [r.taskId, r.agentId, r.runId]),
      [[task.id, 'a', lease.run.runId]],
    )
    assert.equal(await reclaimExpired(h.store), [])
    assert.is((await h.store.get(task.id))?.status, 'ready')
    assert.is((await h.store.get(live.id))?.status, 'in-progress')
    assert.is((await h.store.readRun(task.id))?.status, 'failed')
    assert.is(await codeOf(h.store.heartbeat(task.id, 'a')), 'AOF_LOCKED')
    // A completion from the agent that lost the task never lands.
    assert.is(await codeOf(h.store.transition(task.id, 'review', { actor: 'a', leasedTo: 'a' })), 'AOF_LOCKED')
    // The next lease starts a new run.
    const next = await h.store.lease(task.id, 'c')
    assert.is.not(next.run.runId, lease.run.runId)
  })

  t('an expired lease can be taken by another agent; a live one cannot', async ({ h }) => {
    const task = await h.store.create({ title: 'x', status: 'ready' })
    const first = await h.store.lease(task.id, 'a', { ttlMs: 1, heartbeatTtlMs: 600_000 })
    await untilExpired(h.store, first.task.data.lease ? String((first.task.data.lease as { expiresAt: string }).expiresAt) : '')
    const taken = await h.store.lease(task.id, 'b', { ttlMs: 60_000 })
    assert.is(taken.renewed, false)
    assert.is(taken.task.status, 'in-progress')
    assert.is(taskLease(taken.task)?.agent, 'b')
    assert.is.not(taken.run.runId, first.run.runId)
  })

  t('a worker report from the run holding the task applies its outcome once; the same report again changes nothing', async ({ h }) => {
    const task = await h.store.create({ title: 'x', agent: 'swe', status: 'ready' })
    const { run } = await h.store.lease(task.id, 'swe', { ttlMs: 60_000 })
    const target = { taskId: task.id, agentId: 'swe', aofRunId: run.runId! }
    const first = await reportCompletion(h.store, target, completionFromState({ summary: 'calibrated' }))
    assert.equal([first.kind, first.kind === 'sent' && first.route.outcome, first.status], ['sent', 'accepted', 'review'])
    const again = await reportCompletion(h.store, target, completionFromState({ summary: 'calibrated' }))
    assert.equal([again.kind, again.status], ['agent', 'review'])
    const moves = await h.store.readEvents({ taskId: task.id, type: 'task.transitioned' })
    assert.equal(
      moves.map((e) => `${e.payload.from}>${e.payload.to}`),
      ['ready>in-progress', 'in-progress>review'],
    )
    const completed = await h.store.readEvents({ taskId: task.id, type: 'task.completed' })
    assert.equal(
      completed.map((e) => [e.payload.outcome, e.payload.runId]),
      [['done', run.runId]],
    )
    assert.is((await h.store.readRun(task.id))?.status, 'completed')
  })

  t('a late report from a run the scheduler reclaimed is refused; the run that took over keeps the task', async ({ h }) => {
    const task = await h.store.create({ title: 'x', agent: 'swe', status: 'ready' })
    const old = await h.store.lease(task.id, 'swe', { ttlMs: 60_000, heartbeatTtlMs: 1 })
    await untilExpired(h.store, old.heartbeat.expiresAt!)
    const dry = await schedulerPass(h.store, { dryRun: true })
    assert.equal(
      dry.actions.map((a) => [a.type, a.taskId, a.runId, a.resolution]),
      [['stale_heartbeat', task.id, old.run.runId, undefined]],
    )
    assert.is((await h.store.get(task.id))?.status, 'in-progress', 'a dry run changes nothing')
    const polled = await schedulerPass(h.store)
    assert.equal(
      polled.actions.map((a) => [a.taskId, a.agentId, a.resolution]),
      [[task.id, 'swe', 'reclaimed']],
    )
    // Another board of the same agent takes it in a new run.
    const now = await h.store.lease(task.id, 'swe', { ttlMs: 60_000 })
    assert.is.not(now.run.runId, old.run.runId)
    const late = await reportCompletion(h.store, { taskId: task.id, agentId: 'swe', aofRunId: old.run.runId! }, completionFromState({}))
    assert.equal([late.kind, late.status], ['lost', 'in-progress'])
    assert.is((await h.store.readRun(task.id))?.runId, now.run.runId)
    assert.is(taskLease((await h.store.get(task.id))!)?.agent, 'swe')
    const current = await reportCompletion(h.store, { taskId: task.id, agentId: 'swe', aofRunId: now.run.runId! }, completionFromState({}))
    assert.equal([current.kind, current.status], ['sent', 'review'])
    const toReview = (await h.store.readEvents({ taskId: task.id, type: 'task.transitioned' })).filter((e) => e.payload.to === 'review')
    assert.is(toReview.length, 1)
  })

  t.run()
}
