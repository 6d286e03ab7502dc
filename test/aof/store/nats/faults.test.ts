/**
 * Bad input and faults of the JetStream store (issue 17): an unreachable server, wrong credentials, a KV entry
 * written by something else, boards whose clocks are off (expiry is decided in server time), and a sender that
 * died between recording a message and routing it.
 */

import { reclaimExpired, schedulerPass } from '../../../../src/aof/roles/scheduler-pass.ts'
import { reportCompletion } from '../../../../src/aof/roles/worker-report.ts'
import { completionFromState } from '../../../../src/aof/protocol/worker-completion.ts'
import type { TaskStore } from '../../../../src/aof/store/port.ts'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { connect } from '@nats-io/transport-node'
import { createServer } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../../../src/core/errors.ts'
import { openNatsStore } from '../../../../src/aof/store/nats/store.ts'
import { routeOn } from '../../../../src/aof/roles/router.ts'
import { taskLease } from '../../../../src/aof/protocol/task-file.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../../../support/nats-server.ts'
import { skipIf } from '../../../support/skip.ts'
import { statusUpdate } from '../../helpers.ts'

const missing = natsServerMissing()
let server: NatsServer | undefined
let n = 0
const project = () => `f${process.pid}_${++n}`

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p
  } catch (e) {
    return { code: isTeaError(e) ? e.code : 'untyped', message: (e as Error).message }
  }
  return { code: 'no error', message: '' }
}

test.before(async () => {
  if (!missing) server = await startNatsServer()
})
test.after(async () => {
  await server?.cleanup()
})

skipIf(test, missing, 'a server that is not there: NATS_CONNECT naming the URL, well within the connect timeout', async () => {
  // A port that was free a moment ago and has nothing listening now.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 1))
    })
  })
  const url = `nats://127.0.0.1:${port}`
  const started = Date.now()
  const e = await errorOf(openNatsStore({ url, timeoutMs: 20_000 }))
  assert.is(e.code, 'NATS_CONNECT')
  assert.is(e.message, `cannot reach NATS at ${url}: connection refused`)
  assert.ok(Date.now() - started < 20_000)
})

skipIf(test, missing, 'wrong credentials: NATS_CONNECT saying authorization, naming the URL', async () => {
  const secured = await startNatsServer(['--user', 'board', '--pass', 'right'])
  try {
    const url = `nats://board:wrong@127.0.0.1:${secured.port}`
    const e = await errorOf(openNatsStore({ url, timeoutMs: 10_000 }))
    assert.is(e.code, 'NATS_CONNECT')
    assert.match(e.message, `cannot reach NATS at nats://board:***@127.0.0.1:${secured.port}: authorization violation`)
    const ok = await openNatsStore({ url: `nats://board:right@127.0.0.1:${secured.port}`, project: project() })
    assert.is((await ok.list()).tasks.length, 0)
    await ok.close()
  } finally {
    await secured.cleanup()
  }
})

skipIf(test, missing, 'a KV entry that is not a task is listed as a problem at its key; the valid tasks are still listed', async () => {
  const p = project()
  const store = await openNatsStore({ url: server!.url, project: p })
  try {
    const good = await store.create({ title: 'good', status: 'ready' })
    const nc = await connect({ servers: server!.url })
    const kv = await new Kvm(jetstream(nc)).open(`${p}_tasks`)
    await kv.put('TASK-2026-02-09-001', 'not a task at all')
    await kv.put('TASK-2026-02-09-002', '---\nid: TASK-2026-02-09-002\nstatus: ready\n---\n')
    await nc.close()
    const listed = await store.list()
    assert.equal(
      listed.tasks.map((t) => t.id),
      [good.id],
    )
    assert.equal(
      listed.problems.map((x) => [x.code, x.where.file]),
      [
        ['AOF_INVALID', `${server!.url}/${p}/tasks/TASK-2026-02-09-001`],
        ['AOF_INVALID', `${server!.url}/${p}/tasks/TASK-2026-02-09-002`],
      ],
    )
    // Claiming around it works: the invalid entries never stop a worker.
    assert.is((await store.lease(good.id, 'w')).task.status, 'in-progress')
  } finally {
    await store.close()
  }
})

/** Runs `fn` with this process's clock `skewMs` off (Date.now and new Date()), as a board with a wrong clock. */
async function skewed<T>(skewMs: number, fn: () => Promise<T>): Promise<T> {
  const Real = Date
  class Skewed extends Real {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(Real.now() + skewMs)
      else super(...(args as [string]))
    }
    static override now(): number {
      return Real.now() + skewMs
    }
  }
  globalThis.Date = Skewed as DateConstructor
  try {
    return await fn()
  } finally {
    globalThis.Date = Real
  }
}

skipIf(
  test,
  missing,
  'clock skew: a lease taken on a board two hours fast lasts its TTL in server time, and a scheduler two hours fast reclaims nothing live',
  async () => {
    const p = project()
    const store = await openNatsStore({ url: server!.url, project: p })
    try {
      const task = await store.create({ title: 'skew', status: 'ready' })
      const hour = 3_600_000
      const leased = await skewed(2 * hour, () => store.lease(task.id, 'fast-board', { ttlMs: 60_000, heartbeatTtlMs: 60_000 }))
      const serverNow = (await store.now()).getTime()
      const expires = Date.parse(taskLease(leased.task)!.expiresAt)
      // Server time + 60 s, not the board's clock + 60 s (which would be two hours on).
      assert.ok(
        Math.abs(expires - 60_000 - serverNow) < 30_000,
        `lease expires at ${new Date(expires).toISOString()}, server now ${new Date(serverNow).toISOString()}`,
      )
      assert.equal(await skewed(2 * hour, () => reclaimExpired(store)), [])
      assert.equal(await skewed(-2 * hour, () => reclaimExpired(store)), [])
      assert.is((await store.get(task.id))?.status, 'in-progress')
    } finally {
      await store.close()
    }
  },
)

skipIf(test, missing, 'a message recorded by a sender that died before routing it is routed when re-sent, and only once', async () => {
  const store = await openNatsStore({ url: server!.url, project: project() })
  try {
    const task = await store.create({ title: 'Half sent', status: 'ready', agent: 'swe-backend' })
    await store.lease(task.id, 'swe-backend')
    const sentAt = new Date((await store.now()).getTime() + 1).toISOString()
    const msg = { ...statusUpdate(task.id, { progress: 'first half' }, { sentAt }), id: 'msg-half-sent' }
    // What the dead sender got as far as: the message is on the stream, nothing was routed.
    assert.is(await store.recordMessage('msg-half-sent', 'status.update', JSON.stringify(msg)), 'new')
    const resent = await routeOn(store, msg)
    assert.is(resent.outcome, 'accepted')
    assert.match((await store.get(task.id))!.body, 'Progress: first half')
    assert.equal(await routeOn(store, msg), { outcome: 'ignored', reason: 'duplicate', taskId: task.id, type: 'status.update' })
    const receipts = await store.readEvents({ taskId: task.id, type: 'protocol.message.received' })
    assert.equal(
      receipts.map((e) => e.payload),
      [{ type: 'status.update', messageId: 'msg-half-sent' }],
    )
  } finally {
    await store.close()
  }
})

skipIf(
  test,
  missing,
  'a sender that died after the receipt but before the effect: the re-send is routed, not taken for a duplicate',
  async () => {
    const store = await openNatsStore({ url: server!.url, project: project() })
    try {
      const task = await store.create({ title: 'Receipt only', status: 'ready', agent: 'swe-backend' })
      await store.lease(task.id, 'swe-backend')
      const sentAt = new Date((await store.now()).getTime() + 1).toISOString()
      const msg = { ...statusUpdate(task.id, { progress: 'after the receipt' }, { sentAt }), id: 'msg-receipt-only' }
      // The dead sender recorded the message and logged its receipt; the handler never ran, nothing was marked.
      await store.recordMessage('msg-receipt-only', 'status.update', JSON.stringify(msg))
      await store.appendEvents([
        {
          type: 'protocol.message.received',
          actor: 'swe-backend',
          taskId: task.id,
          payload: { type: 'status.update', messageId: 'msg-receipt-only' },
        },
      ])
      assert.is(await store.wasRouted('msg-receipt-only'), false)
      assert.is((await routeOn(store, msg)).outcome, 'accepted')
      assert.match((await store.get(task.id))!.body, 'Progress: after the receipt')
      assert.is(await store.wasRouted('msg-receipt-only'), true)
      assert.is((await routeOn(store, msg)).reason, 'duplicate')
    } finally {
      await store.close()
    }
  },
)

skipIf(
  test,
  missing,
  'a message sent again after the stream forgot its id (the duplicate window) is still a duplicate: it was marked routed',
  async () => {
    const p = project()
    const store = await openNatsStore({ url: server!.url, project: p })
    const nc = await connect({ servers: server!.url })
    try {
      // A window of 100 ms instead of 2 minutes, so the test need not wait for the stream to forget.
      const jsm = await jetstreamManager(nc)
      const config = (await jsm.streams.info(`${p}_events`)).config
      await jsm.streams.update(`${p}_events`, { ...config, duplicate_window: 100_000_000 })
      const task = await store.create({ title: 'Late re-send', status: 'ready', agent: 'swe-backend' })
      await store.lease(task.id, 'swe-backend')
      const sentAt = new Date((await store.now()).getTime() + 1).toISOString()
      const msg = { ...statusUpdate(task.id, { progress: 'once' }, { sentAt }), id: 'msg-late' }
      assert.is((await routeOn(store, msg)).outcome, 'accepted')
      // The server forgets ids on a timer of its own: ask until it has.
      let recorded = 'duplicate'
      for (let i = 0; i < 50 && recorded === 'duplicate'; i++) {
        await new Promise((r) => setTimeout(r, 100))
        recorded = await store.recordMessage('msg-late', 'status.update', JSON.stringify(msg))
      }
      assert.is(recorded, 'new', 'the stream forgot the id')
      assert.is((await routeOn(store, msg)).reason, 'duplicate')
      const receipts = await store.readEvents({ taskId: task.id, type: 'protocol.message.received' })
      assert.is(receipts.length, 1)
    } finally {
      await nc.close()
      await store.close()
    }
  },
)

/** `store`, with `meanwhile` run (once) by another board just as the report writes its run result. */
function raced(store: TaskStore, meanwhile: () => Promise<unknown>): TaskStore {
  let once = false
  return {
    ...store,
    writeRunFile: async (id, name, text) => {
      if (name === 'run_result.json' && !once) {
        once = true
        await meanwhile()
      }
      return store.writeRunFile(id, name, text)
    },
  }
}

skipIf(test, missing, "a worker's report whose task changed under it is applied again on a fresh read: accepted, once", async () => {
  const p = project()
  const store = await openNatsStore({ url: server!.url, project: p })
  const other = await openNatsStore({ url: server!.url, project: p })
  try {
    const task = await store.create({ title: 'x', agent: 'swe', status: 'ready' })
    const { run } = await store.lease(task.id, 'swe', { ttlMs: 60_000 })
    const bumped = raced(store, () => other.update(task.id, (t) => void (t.data.metadata = { touched: true })))
    const r = await reportCompletion(bumped, { taskId: task.id, agentId: 'swe', aofRunId: run.runId! }, completionFromState({}))
    assert.equal([r.kind, r.kind === 'sent' && r.route.outcome, r.status], ['sent', 'accepted', 'review'])
    assert.is((await store.readEvents({ taskId: task.id, type: 'task.completed' })).length, 1)
    assert.is((await store.readEvents({ taskId: task.id, type: 'protocol.message.failed' })).length, 0)
  } finally {
    await store.close()
    await other.close()
  }
})

skipIf(
  test,
  missing,
  "a worker's report that races the scheduler's reclaim is lost, not refused; the task is free to run again",
  async () => {
    const p = project()
    const store = await openNatsStore({ url: server!.url, project: p })
    const other = await openNatsStore({ url: server!.url, project: p })
    try {
      const task = await store.create({ title: 'x', agent: 'swe', status: 'ready' })
      const { run, heartbeat } = await store.lease(task.id, 'swe', { ttlMs: 60_000, heartbeatTtlMs: 1 })
      while ((await store.now()).getTime() <= Date.parse(heartbeat.expiresAt!)) await new Promise((r) => setTimeout(r, 5))
      const reclaimed = raced(store, () => schedulerPass(other))
      const r = await reportCompletion(reclaimed, { taskId: task.id, agentId: 'swe', aofRunId: run.runId! }, completionFromState({}))
      assert.equal([r.kind, r.status], ['lost', 'ready'])
      assert.is((await store.get(task.id))?.status, 'ready')
      assert.is((await store.readEvents({ taskId: task.id, type: 'task.completed' })).length, 0)
    } finally {
      await store.close()
      await other.close()
    }
  },
)

test.run()
