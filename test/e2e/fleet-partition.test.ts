/**
 * A board cut off from the NATS server (docs/fleet.md, Partitions), with real `tea worker` processes from the built
 * bundle: one that loses the server mid-task keeps running its agent and reports when the server is back; one that
 * is frozen (SIGSTOP: no heartbeats, as a board behind a partition) past its heartbeat's expiry by server time has
 * its task reclaimed by the scheduler and done by another board, and when it comes back nothing of its run is
 * applied — the task moves into review once.
 */

import { mkdirSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openNatsStore } from '../../src/aof/store/nats/store.ts'
import type { TaskStore } from '../../src/aof/store/port.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'
import { scratch, tea } from './cli.ts'
import { type Proc, end, start, workerLines } from './fleet-harness.ts'

const SLOW = `name: slow
nodes:
  - name: start
    run: "return { started: true }"
  - name: work
    run: "await new Promise((r) => setTimeout(r, 2000)); return { summary: 'slow ' + state.task.title }"
`
const QUICK = `name: slow
nodes:
  - name: start
    run: "return { started: true }"
  - name: work
    run: "return { summary: 'quick ' + state.task.title }"
`

const missing = natsServerMissing()

/** `read`, tried again (up to three times) when it times out. */
async function retryTimeout<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read()
    } catch (e) {
      if (attempt >= 3 || !/timeout/i.test(String(e))) throw e
    }
  }
}

async function withFleet(
  body: (f: { server: NatsServer; store: TaskStore; worker: (...args: string[]) => Proc; path(name: string): string }) => Promise<void>,
) {
  const s = scratch({ 'slow.yaml': SLOW, 'quick.yaml': QUICK })
  const server = await startNatsServer()
  const procs: Proc[] = []
  let store: TaskStore | undefined
  try {
    store = await openNatsStore({ url: server.url, timeoutMs: 10_000 })
    let n = 0
    const worker = (...args: string[]) => {
      const dataDir = s.path(`board${n++}`)
      mkdirSync(dataDir)
      const p = start(['worker', '--agent-id', 'swe', '--nats', server.url, '--data-dir', dataDir, '--interval-ms', '200', ...args])
      procs.push(p)
      return p
    }
    await body({ server, store, worker, path: s.path })
  } finally {
    for (const p of procs) if (p.child.signalCode === null && p.child.exitCode === null) p.child.kill('SIGCONT')
    await Promise.all(procs.map(end))
    await store?.close().catch(() => {})
    await server.cleanup()
    s.cleanup()
  }
}

skipIf(test, missing, 'a worker that loses the server mid-task finishes its agent and reports when the server is back', () =>
  withFleet(async ({ server, store, worker, path }) => {
    const task = await store.create({ title: 'calibrate', agent: 'swe', status: 'ready' })
    const w = worker('--agent', path('slow.yaml'), '--heartbeat-ttl-ms', '60000', '--lease-ttl-ms', '120000', '-v')
    await w.waitErr(/✓ start /)
    await server.stop()
    // The agent's second node runs on without the server; the report then waits for it.
    await w.waitErr(/✓ work /)
    await w.waitErr(/cannot report yet/)
    await server.restart()
    await w.waitErr(/: done → review/)
    w.child.kill('SIGTERM')
    assert.is((await w.exited).code, 130)
    assert.equal(
      workerLines(w).map((l) => [l.taskId, l.outcome, l.status]),
      [[task.id, 'done', 'review']],
    )
    // The test's own connection sat idle through the outage and reconnects in the background (as the worker's did):
    // its first request may time out while it does. What is under test is the worker's report, already seen above.
    assert.is((await retryTimeout(() => store.get(task.id)))?.status, 'review')
    const moves = await store.readEvents({ taskId: task.id, type: 'task.transitioned' })
    assert.equal(
      moves.map((e) => `${e.payload.from}>${e.payload.to}`),
      ['ready>in-progress', 'in-progress>review'],
    )
  }),
)

skipIf(
  test,
  missing,
  'a frozen worker past its heartbeat is reclaimed by server time; another board does the task; nothing of the frozen run lands',
  () =>
    withFleet(async ({ server, store, worker, path }) => {
      const task = await store.create({ title: 'calibrate', agent: 'swe', status: 'ready' })
      const frozen = worker('--agent', path('slow.yaml'), '--heartbeat-ttl-ms', '1500', '--lease-ttl-ms', '3000', '-v')
      const [, firstRun] = await frozen.waitErr(/starting run (\S+)/)
      await frozen.waitErr(/✓ start /)
      frozen.child.kill('SIGSTOP')
      // The scheduler, until the server's clock says the heartbeat expired (no sleep decides it).
      for (;;) {
        const r = await tea(['aof', 'poll', '--nats', server.url, '--heartbeat-ttl-ms', '1500'])
        assert.is(r.code, 0, r.stderr)
        const actions = JSON.parse(r.stdout).actions as Array<{ taskId: string; resolution: string }>
        if (actions.some((a) => a.taskId === task.id && a.resolution === 'reclaimed')) break
        await new Promise((r) => setTimeout(r, 300))
      }
      const other = await tea([
        'worker',
        '--agent-id',
        'swe',
        '--agent',
        path('quick.yaml'),
        '--nats',
        server.url,
        '--data-dir',
        path('other'),
        '--once',
      ])
      assert.is(other.code, 0, other.stderr)
      const [done] = other.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      assert.equal([done.taskId, done.outcome, done.status], [task.id, 'done', 'review'])
      assert.is.not(done.runId, firstRun)

      frozen.child.kill('SIGCONT')
      await frozen.waitErr(new RegExp(`${task.id}: (run lost|the task left run)`))
      frozen.child.kill('SIGTERM')
      assert.is((await frozen.exited).code, 130)
      assert.equal(
        workerLines(frozen).map((l) => [l.taskId, l.runId, l.outcome]),
        [[task.id, firstRun, 'lost']],
      )
      const moves = await store.readEvents({ taskId: task.id, type: 'task.transitioned' })
      assert.equal(
        moves.map((e) => `${e.payload.from}>${e.payload.to}`),
        ['ready>in-progress', 'in-progress>ready', 'ready>in-progress', 'in-progress>review'],
      )
      const completed = await store.readEvents({ taskId: task.id, type: 'task.completed' })
      assert.equal(
        completed.map((e) => e.payload.runId),
        [done.runId.split('-').at(-1)],
      )
    }),
)

skipIf(test, missing, 'a worker stopped (SIGTERM) while the server is away exits 130, not waiting for the server', () =>
  withFleet(async ({ server, worker, path }) => {
    const w = worker('--agent', path('quick.yaml'))
    await w.waitErr(/polling/)
    await server.stop()
    await w.waitErr(/cannot claim a task/)
    w.child.kill('SIGTERM')
    assert.is((await w.exited).code, 130)
  }),
)

test('tea worker --nats with the server unreachable at start: exit 1 and one line naming it', async () => {
  const s = scratch({ 'quick.yaml': QUICK })
  try {
    const r = await tea([
      'worker',
      '--agent-id',
      'swe',
      '--agent',
      s.path('quick.yaml'),
      '--data-dir',
      s.path('d'),
      '--nats',
      'nats://127.0.0.1:1',
    ])
    assert.equal([r.code, r.stdout], [1, ''])
    assert.is(r.stderr, 'tea worker: NATS_CONNECT: cannot reach NATS at nats://127.0.0.1:1: connection refused\n')
  } finally {
    s.cleanup()
  }
})

test.run()
