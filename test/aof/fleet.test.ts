/**
 * Many workers, one queue (issue 17 item 4, at the task-store level): three worker processes and a scheduler in
 * this process, 200 tasks; a fourth worker SIGKILLed while it holds a task; on NATS the server itself stopped for
 * 5 s and restarted mid-run (file storage, same port). Afterwards every task is in review, no task was completed
 * twice, every task.transitioned event is a valid AOF/1 move, and the killed worker's task was reclaimed and done by
 * another. The same on the filesystem store (one machine, no server to stop).
 */

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { aofContext } from '../../src/aof/index.ts'
import { isValidTransition } from '../../src/aof/status.ts'
import { fsTaskStore } from '../../src/aof/store-fs.ts'
import type { TaskStore } from '../../src/aof/store-port.ts'
import { openNatsStore } from '../../src/aof/nats/store.ts'
import { natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'

const TASKS = 200
const WORKER = join(__dirname, 'fixtures', 'claim-worker.ts')

interface Proc {
  child: ChildProcess
  lines: string[]
  exited: Promise<number | null>
  waitFor(prefix: string): Promise<string>
}

function worker(args: Record<string, unknown>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  const waiters: Array<() => void> = []
  let buf = ''
  child.stdout!.on('data', (b: Buffer) => {
    buf += b.toString()
    const parts = buf.split('\n')
    buf = parts.pop()!
    lines.push(...parts)
    for (const w of waiters.splice(0)) w()
  })
  let err = ''
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()))
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      if (code) process.stderr.write(err)
      r(code)
    }),
  )
  const waitFor = async (prefix: string): Promise<string> => {
    for (;;) {
      const hit = lines.find((l) => l.startsWith(prefix))
      if (hit) return hit
      await new Promise<void>((r) => waiters.push(r))
    }
  }
  return { child, lines, exited, waitFor }
}

async function run(kind: 'fs' | 'nats'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-fleet-'))
  const server = kind === 'nats' ? await startNatsServer() : undefined
  const where = kind === 'fs' ? { kind, dir } : { kind, url: server!.url, project: 'fleet' }
  const open = (): Promise<TaskStore> =>
    kind === 'fs'
      ? Promise.resolve(fsTaskStore(aofContext(dir, { lock: { timeoutMs: 60_000 } })))
      : openNatsStore({ url: server!.url, project: 'fleet' })
  const procs: Proc[] = []
  let store: TaskStore | undefined
  let schedulerOn = true
  try {
    store = await open()
    for (let i = 0; i < TASKS; i++) await store.create({ title: `t${i}`, status: 'ready' })
    // The doomed worker takes one task and holds it; it dies before it can finish.
    const doomed = worker({ ...where, agent: 'doomed', hold: true })
    procs.push(doomed)
    const doomedTask = (await doomed.waitFor('leased ')).slice(7)
    doomed.child.kill('SIGKILL')
    await doomed.exited
    for (let i = 0; i < 3; i++) procs.push(worker({ ...where, agent: `w${i}` }))
    const s = store
    // The scheduler: reclaims expired leases until the run is over, riding out the outage.
    const reclaimed: string[] = []
    const scheduler = (async () => {
      while (schedulerOn) {
        try {
          for (const r of await s.reclaimExpired()) reclaimed.push(r.taskId)
        } catch {
          // the server is away
        }
        await new Promise((r) => setTimeout(r, 300))
      }
    })()
    if (server) {
      // Stop the server once a fifth of the tasks are done, for 5 s, then bring it back.
      const doneSoFar = () => procs.slice(1).reduce((n, p) => n + p.lines.filter((l) => l.startsWith('done ')).length, 0)
      while (doneSoFar() < TASKS / 5) await new Promise((r) => setTimeout(r, 20))
      await server.stop()
      await new Promise((r) => setTimeout(r, 5_000))
      await server.restart()
    }
    const codes = await Promise.all(procs.slice(1).map((p) => p.exited))
    schedulerOn = false
    await scheduler
    assert.equal(codes, [0, 0, 0])

    const final = await store.list()
    assert.equal(final.problems, [])
    assert.is(final.tasks.length, TASKS)
    assert.equal(
      final.tasks.filter((t) => t.status !== 'review').map((t) => `${t.id} ${t.status}`),
      [],
    )
    const done = procs.flatMap((p) => p.lines.filter((l) => l.startsWith('done ')).map((l) => l.slice(5)))
    const twice = done.filter((id, i) => done.indexOf(id) !== i)
    assert.equal(twice, [], 'no task completed twice')
    assert.ok(reclaimed.includes(doomedTask), `the killed worker's task ${doomedTask} was reclaimed`)
    assert.ok(done.includes(doomedTask), 'and completed by another worker')
    const moves = await store.readEvents({ type: 'task.transitioned' })
    const bad = moves.filter((e) => !isValidTransition(e.payload.from as never, e.payload.to as never))
    assert.equal(bad, [])
    const toReview = moves.filter((e) => e.payload.to === 'review').map((e) => e.taskId)
    assert.equal(
      toReview.filter((id, i) => toReview.indexOf(id) !== i),
      [],
      'no task moved to review twice',
    )
  } finally {
    schedulerOn = false
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL')
    await Promise.all(procs.map((p) => p.exited))
    await store?.close().catch(() => {})
    await server?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  }
}

test('fleet on the filesystem store: 3 workers, 200 tasks, a SIGKILLed worker; each task in review once', () => run('fs'))

skipIf(
  test,
  natsServerMissing(),
  'fleet on NATS: 3 workers, 200 tasks, a SIGKILLed worker, the server down 5 s; each task in review once',
  () => run('nats'),
)

test.run()
