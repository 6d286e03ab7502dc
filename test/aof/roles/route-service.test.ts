/**
 * `tea aof route`, the router service on the durable consumer `<p>_router` (docs/fleet.md, "Messages and routers"),
 * against a real nats-server: router processes (the CLI from source) share one consumer; each message is applied
 * once, a killed router's message in hand is handed to another and applied once, a malformed message is acked and
 * logged as the filesystem router logs it, an unreadable one is given up on at its last delivery, SIGTERM finishes
 * the message in hand and exits 0. Every process a test starts is ended by it (`procs`, killed in `after`).
 */

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { aofContext } from '../../../src/aof/store/fs/context.ts'
import { type NatsTaskStore, openNatsStore } from '../../../src/aof/store/nats/store.ts'
import { routeMessage } from '../../../src/aof/index.ts'
import { queueOn, routeOn } from '../../../src/aof/roles/router.ts'
import { workLogEntries } from '../../../src/aof/protocol/work-log.ts'
import { memoryIo } from '../../../src/cli/io.ts'
import { main } from '../../../src/cli/main.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../../support/nats-server.ts'
import { skipIf } from '../../support/skip.ts'
import { tempDir } from '../../support/temp-dir.ts'
import { BUNDLE, bundleEnv } from '../../e2e/cli.ts'

const ROOT = join(__dirname, '..', '..', '..')
const missing = natsServerMissing()
let server: NatsServer | undefined
const dir = tempDir('tea-route-service-')
const procs: Proc[] = []
let projects = 0

interface Proc {
  child: ChildProcess
  /** stdout lines, parsed. */
  lines: Array<Record<string, unknown>>
  err: () => string
  exited: Promise<number | null>
  /** Resolves when stderr holds `count` lines matching `re`. */
  waitErr(re: RegExp, count?: number): Promise<void>
}

function router(project: string, args: string[]): Proc {
  // The built bundle (npm test builds it first), as a user runs tea: a start from source costs a second of tsx.
  const child = spawn(process.execPath, [BUNDLE, 'aof', 'route', '--nats', server!.url, ...args], {
    cwd: ROOT,
    env: bundleEnv({ TEA_NATS_PROJECT: project, TEA_NATS_URL: '' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: Array<Record<string, unknown>> = []
  let out = ''
  let err = ''
  const waiters: Array<() => void> = []
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString()
    const parts = out.split('\n')
    out = parts.pop()!
    for (const l of parts) lines.push(JSON.parse(l))
    wake()
  })
  child.stderr!.on('data', (b: Buffer) => {
    err += b.toString()
    wake()
  })
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      wake()
      r(code)
    }),
  )
  const waitErr = async (re: RegExp, count = 1): Promise<void> => {
    for (;;) {
      if (err.split('\n').filter((l) => re.test(l)).length >= count) return
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`router exited before ${re}:\n${err}`)
      await new Promise<void>((r) => waiters.push(r))
    }
  }
  const p: Proc = { child, lines, err: () => err, exited, waitErr }
  procs.push(p)
  return p
}

async function project(): Promise<{ name: string; store: NatsTaskStore }> {
  const name = `rs${++projects}p${process.pid}`
  return { name, store: await openNatsStore({ url: server!.url, project: name }) }
}

/** `n` leased tasks, each of agent `a`. */
async function leasedTasks(store: NatsTaskStore, n: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const t = await store.create({ title: `t${i}`, status: 'ready', agent: 'a' })
    await store.lease(t.id, 'a')
    ids.push(t.id)
  }
  return ids
}

function statusUpdate(taskId: string, i: number) {
  const sentAt = new Date(Date.UTC(2026, 10, 25, 10, 0, i)).toISOString()
  return {
    protocol: 'aof',
    version: 1,
    type: 'status.update',
    taskId,
    fromAgent: 'a',
    toAgent: 'orchestrator',
    sentAt,
    payload: { taskId, agentId: 'a', notes: `m${i}` },
  }
}

/** Queues `count` status updates over `tasks` (as `tea aof send --no-route` does); their message ids, in order. */
async function queueUpdates(store: NatsTaskStore, tasks: string[], count: number, from = 0): Promise<string[]> {
  const ids: string[] = []
  for (let i = from; i < from + count; i++) {
    const r = await queueOn(store, statusUpdate(tasks[i % tasks.length]!, i))
    assert.is(r.outcome, 'queued')
    ids.push((r as { messageId: string }).messageId)
  }
  return ids
}

/** Every Work Log note of every task: each `m<i>` must be there exactly once. */
async function notes(store: NatsTaskStore, tasks: string[]): Promise<string[]> {
  const out: string[] = []
  for (const id of tasks) for (const e of workLogEntries((await store.get(id))!.body)) out.push(e.replace(/^.* Notes: /, ''))
  return out.sort()
}

const expected = (count: number) => Array.from({ length: count }, (_, i) => `m${i}`).sort()

test.before(async () => {
  if (!missing) server = await startNatsServer()
})
test.after(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
  await server?.cleanup()
  rmSync(dir, { recursive: true, force: true })
})

skipIf(test, missing, 'two routers on one consumer: 200 queued messages, each routed by one router and applied once', async () => {
  const { name, store } = await project()
  try {
    const tasks = await leasedTasks(store, 10)
    const ids = await queueUpdates(store, tasks, 200)
    // A message its sender routed itself is acked untouched by the service.
    const own = await routeOn(store, { ...statusUpdate(tasks[0]!, 200), payload: { taskId: tasks[0], agentId: 'a', notes: 'own' } })
    assert.is(own.outcome, 'accepted')
    const [a, b] = [router(name, ['--once']), router(name, ['--once'])]
    assert.equal(await Promise.all([a.exited, b.exited]), [0, 0], a.err() + b.err())
    const lines = [...a.lines, ...b.lines]
    const routed = lines.filter((l) => l.reason !== 'routed_by_sender')
    assert.equal(routed.map((l) => l.messageId).sort(), [...ids].sort(), 'every queued message has exactly one line')
    assert.ok(
      routed.every((l) => l.outcome === 'accepted' && l.delivery === 1),
      JSON.stringify(routed.find((l) => l.outcome !== 'accepted')),
    )
    assert.equal(
      lines.filter((l) => l.reason === 'routed_by_sender').map((l) => l.type),
      ['status.update'],
    )
    assert.equal(await notes(store, tasks), [...expected(200), 'own'].sort())
    // One receipt per message: none was routed twice.
    const receipts = (await store.readEvents({ type: 'protocol.message.received' })).map((e) => e.payload.messageId)
    assert.is(receipts.length, 201)
    assert.is(new Set(receipts).size, 201)
    assert.equal(await (await store.routerQueue()).backlog(), { pending: 0, inHand: 0 })
    assert.match(
      a.err(),
      /tea aof route: draining rs\d+p\d+\.msg\.> on nats:\/\/.*\(consumer rs\d+p\d+_router, ack wait 30000 ms, max deliver 5\)/,
    )
    assert.match(a.err() + b.err(), /message\(s\) \(\d+ accepted/)
  } finally {
    await store.close()
  }
})

skipIf(test, missing, 'a router SIGKILLed with a message in hand: the message goes to another router and is applied once', async () => {
  const { name, store } = await project()
  const options = ['--ack-wait-ms', '1500']
  try {
    const tasks = await leasedTasks(store, 4)
    const ids = await queueUpdates(store, tasks, 60)
    const queue = await store.routerQueue({ ackWaitMs: 1500 })
    const a = router(name, options)
    // Freeze the router between two messages until it is seen holding one, then kill it there.
    let held = false
    for (let n = 5; n < 60 && !held; n++) {
      await a.waitErr(/^tea aof route: #\d+ /, n)
      a.child.kill('SIGSTOP')
      held = (await queue.backlog()).inHand > 0
      if (!held) a.child.kill('SIGCONT')
    }
    assert.ok(held, 'the router was caught holding a message')
    a.child.kill('SIGKILL')
    await a.exited
    const b = router(name, ['--once', ...options])
    assert.is(await b.exited, 0, b.err())
    const lines = [...a.lines, ...b.lines]
    assert.equal(lines.map((l) => l.messageId).sort(), [...ids].sort(), 'one line per message across both routers')
    const again = b.lines.filter((l) => (l.delivery as number) > 1)
    assert.is(again.length, 1, JSON.stringify(b.lines))
    // Either it had not been applied (accepted now) or it had and was marked (a duplicate): applied once either way.
    assert.ok(again[0]!.outcome === 'accepted' || again[0]!.reason === 'duplicate', JSON.stringify(again[0]))
    assert.equal(await notes(store, tasks), expected(60))
    assert.equal(await queue.backlog(), { pending: 0, inHand: 0 })
  } finally {
    await store.close()
  }
})

skipIf(test, missing, 'a malformed message is acked and logged as the filesystem router logs it, and never handed out again', async () => {
  const { name, store } = await project()
  try {
    assert.is(await store.recordMessage('bad-1', 'status.update', '{"protocol":"aof", not json', { queued: true }), 'new')
    const r = router(name, ['--once'])
    assert.is(await r.exited, 0, r.err())
    assert.equal(
      r.lines.map((l) => [l.messageId, l.outcome, l.reason]),
      [['bad-1', 'rejected', 'invalid_json']],
    )
    const logged = await store.readEvents({ type: 'protocol.message.rejected' })
    const fsDir = mkdtempSync(join(dir, 'fs-'))
    const ctx = aofContext(fsDir)
    await routeMessage(ctx, '{"protocol":"aof", not json')
    const { readEvents } = await import('../../../src/aof/store/fs/event-log.ts')
    const onDisk = readEvents(ctx, { type: 'protocol.message.rejected' })
    assert.equal(
      logged.map((e) => [e.actor, e.payload]),
      onDisk.map((e) => [e.actor, e.payload]),
    )
    // Acked: nothing left to hand out, nothing in anyone's hands.
    assert.equal(await (await store.routerQueue()).backlog(), { pending: 0, inHand: 0 })
  } finally {
    await store.close()
  }
})

skipIf(test, missing, 'an unreadable message is given back, then given up on at its last delivery (max deliver) and logged', async () => {
  const { name, store } = await project()
  try {
    const ref = JSON.stringify({ $ref: `obj://${name}_files/_big/${'0'.repeat(64)}`, size: 10, sha256: '0'.repeat(64) })
    await store.recordMessage('gone-1', 'status.update', ref, { queued: true })
    const r = router(name, ['--once', '--max-deliver', '2'])
    assert.is(await r.exited, 1, r.err())
    assert.equal(
      r.lines.map((l) => [l.messageId, l.outcome, l.reason, l.delivery]),
      [['gone-1', 'rejected', 'gave_up', 2]],
      r.err(),
    )
    assert.match(r.err(), 'delivery 1 of 2, trying again in 1000 ms')
    assert.match(String(r.lines[0]!.error), 'is missing from the object store')
    const failed = await store.readEvents({ type: 'protocol.message.failed' })
    assert.equal(
      failed.map((e) => [e.payload.messageId, e.payload.deliveries]),
      [['gone-1', 2]],
    )
    // Terminated: never handed out again.
    assert.equal(await (await store.routerQueue({ maxDeliver: 2 })).backlog(), { pending: 0, inHand: 0 })
  } finally {
    await store.close()
  }
})

skipIf(test, missing, 'SIGTERM mid-stream: the message in hand is finished and acked, the router exits 0', async () => {
  const { name, store } = await project()
  try {
    const tasks = await leasedTasks(store, 2)
    await queueUpdates(store, tasks, 40)
    const r = router(name, [])
    await r.waitErr(/^tea aof route: #\d+ /, 3)
    r.child.kill('SIGTERM')
    assert.is(await r.exited, 0, r.err())
    assert.match(r.err(), 'SIGTERM: stopping after the message in hand')
    assert.match(r.err(), /message\(s\) \(\d+ accepted\); stopped/)
    const done = r.lines.length
    assert.ok(r.lines.every((l) => l.outcome === 'accepted'))
    const queue = await store.routerQueue()
    assert.equal(await queue.backlog(), { pending: 40 - done, inHand: 0 }, 'nothing left in its hands')
    assert.is((await notes(store, tasks)).length, done)
  } finally {
    await store.close()
  }
})

skipIf(
  test,
  missing,
  'the server stopped and restarted under a running router: it reconnects and routes what is queued after',
  async () => {
    const { name, store } = await project()
    try {
      const tasks = await leasedTasks(store, 2)
      await queueUpdates(store, tasks, 4)
      const r = router(name, [])
      await r.waitErr(/^tea aof route: #\d+ /, 4)
      await server!.stop()
      await server!.restart()
      // The test's own connection is back once a write goes through (its client reconnects too).
      for (let attempt = 0; ; attempt++) {
        try {
          await store.now()
          break
        } catch (e) {
          if (attempt > 50) throw e
          await new Promise((w) => setTimeout(w, 200))
        }
      }
      await queueUpdates(store, tasks, 10, 4)
      await r.waitErr(/^tea aof route: #\d+ /, 14)
      // A message redelivered after the reconnect is logged again as a duplicate: 14 lines are not yet 14 routed.
      for (const until = Date.now() + 30_000; r.lines.filter((l) => l.outcome === 'accepted').length < 14 && Date.now() < until; )
        await new Promise((w) => setTimeout(w, 50))
      r.child.kill('SIGTERM')
      assert.is(await r.exited, 0, r.err())
      assert.equal(await notes(store, tasks), expected(14))
      assert.ok(
        r.lines.every((l) => l.outcome === 'accepted' || l.reason === 'duplicate'),
        JSON.stringify(r.lines),
      )
    } finally {
      await store.close()
    }
  },
)

skipIf(test, missing, 'route and send --no-route need a NATS server; send --no-route queues once, a re-send is a duplicate', async () => {
  const io = memoryIo({ cwd: dir, env: {} })
  assert.is(await main(['aof', 'route', '--once'], io), 2)
  assert.match(io.stderr, 'tea aof route reads the message queue on a NATS server')
  const io2 = memoryIo({ cwd: dir, env: {}, stdin: '{}' })
  assert.is(await main(['aof', 'send', '--no-route'], io2), 2)
  assert.match(io2.stderr, '--no-route leaves the message to a router service on NATS')
  const { name, store } = await project()
  try {
    const [task] = await leasedTasks(store, 1)
    const text = JSON.stringify(statusUpdate(task!, 1))
    const send = async () => {
      const s = memoryIo({ cwd: dir, env: { TEA_NATS_PROJECT: name }, stdin: text })
      assert.is(await main(['aof', 'send', '--no-route', '--nats', server!.url], s), 0, s.stderr)
      return JSON.parse(s.stdout)
    }
    const first = await send()
    assert.equal([first.outcome, first.taskId, first.type], ['queued', task, 'status.update'])
    assert.equal(await send(), { outcome: 'ignored', reason: 'duplicate', taskId: task, type: 'status.update' })
    assert.equal(await (await store.routerQueue()).backlog(), { pending: 1, inHand: 0 })
  } finally {
    await store.close()
  }
})

test.run()
