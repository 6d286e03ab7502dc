/**
 * Many boards, one queue, with real `tea worker` processes running a real agent (issue 17 item 4), from the built
 * bundle: 200 tasks, three workers of one agent id and a scheduler (`tea aof poll` in a loop); a fourth worker
 * SIGKILLed in the middle of its task (after the agent's first node checkpointed); on NATS the server itself stopped
 * for 5 s and restarted mid-run (JetStream file storage in a temp dir, same port), each worker a board with its own
 * data dir for the agent's LMDB checkpoints. Afterwards: every task in review, reported done exactly once; from the
 * event stream, every move valid, one move into review and one `task.completed` per task, per task the moves
 * balance (what went into a status came out of it, but for the start and the end) and one lease more than the
 * scheduler's reclaims (never two runs at once); the killed worker's task done once by another. The same on the filesystem store, the workers sharing one data dir as processes of one machine.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { aofContext } from '../../src/aof/index.ts'
import { openNatsStore } from '../../src/aof/store/nats/store.ts'
import type { AofEvent } from '../../src/aof/protocol/events.ts'
import { isValidTransition } from '../../src/aof/protocol/status.ts'
import { fsTaskStore } from '../../src/aof/store/fs/store.ts'
import type { TaskStore } from '../../src/aof/store/port.ts'
import { natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'
import { scratch } from './cli.ts'
import { type Proc, end, scheduler, start, workerLines } from './fleet-harness.ts'

const TASKS = 200
const HEARTBEAT_TTL_MS = 4_000

const QUICK = `name: fleet-agent
nodes:
  - name: start
    run: "return { started: state.task.id }"
  - name: work
    run: "await new Promise((r) => setTimeout(r, 20)); return { summary: 'did ' + state.task.title }"
`
// The same agent (same node names), but its second node never ends: the worker running it is killed there.
const HOLD = `name: fleet-agent
nodes:
  - name: start
    run: "return { started: state.task.id }"
  - name: work
    timeout: 600
    run: "await new Promise((r) => setTimeout(r, 600000)); return {}"
`

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function run(kind: 'fs' | 'nats'): Promise<void> {
  const t0 = Date.now()
  const phases: string[] = []
  const mark = (what: string) => phases.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  const s = scratch({ 'quick.yaml': QUICK, 'hold.yaml': HOLD })
  const server = kind === 'nats' ? await startNatsServer() : undefined
  const storeArgs = server ? ['--nats', server.url] : ['--data-dir', s.path('shared')]
  const procs: Proc[] = []
  let store: TaskStore | undefined
  let sched: ReturnType<typeof scheduler> | undefined
  try {
    store = server
      ? await openNatsStore({ url: server.url, timeoutMs: 10_000 })
      : fsTaskStore(aofContext(s.path('shared'), { lock: { timeoutMs: 60_000 } }))
    for (let i = 0; i < TASKS; i++) await store.create({ title: `t${i}`, agent: 'swe', status: 'ready' })
    mark('created')

    // A board: its own data dir on NATS (the agent's checkpoints are local); the shared one on the filesystem.
    const worker = (name: string, agent: string, ...more: string[]) => {
      const dataDir = server ? s.path(name) : s.path('shared')
      mkdirSync(dataDir, { recursive: true })
      const args = ['worker', '--agent-id', 'swe', '--agent', s.path(agent), '--interval-ms', '200']
      args.push('--lease-ttl-ms', String(2 * HEARTBEAT_TTL_MS), '--heartbeat-ttl-ms', String(HEARTBEAT_TTL_MS))
      args.push(...(server ? ['--nats', server.url, '--data-dir', dataDir] : ['--data-dir', dataDir]), ...more)
      const p = start(args)
      procs.push(p)
      return p
    }
    const doomed = worker('doomed', 'hold.yaml', '-v')
    const workers = [worker('w0', 'quick.yaml'), worker('w1', 'quick.yaml'), worker('w2', 'quick.yaml')]
    sched = scheduler([...storeArgs, '--heartbeat-ttl-ms', String(HEARTBEAT_TTL_MS)], 2_000)

    // Killed mid-task: its lease taken, its agent run checkpointed after the first node, the second one running.
    const [, doomedTask, doomedRun] = await doomed.waitErr(/(TASK-\S+) "[^"]*": starting run (\S+)/)
    await doomed.waitErr(/✓ start /)
    doomed.child.kill('SIGKILL')
    await doomed.exited

    const doneCount = () => workers.reduce((n, w) => n + workerLines(w).filter((l) => l.outcome === 'done').length, 0)
    if (server) {
      while (doneCount() < TASKS / 5) await sleep(50)
      mark('server stopped')
      await server.stop()
      await sleep(5_000)
      await server.restart()
      mark('restarted')
    }
    const deadline = Date.now() + 240_000
    for (;;) {
      const open = await store.list(['ready', 'in-progress']).catch(() => undefined) // the server may still be coming back
      if (open && open.tasks.length === 0) break
      if (Date.now() > deadline) assert.unreachable(`tasks still open after 240 s: ${open?.tasks.map((t) => `${t.id} ${t.status}`)}`)
      await sleep(500)
    }
    mark('all done')
    // FLEET_DEBUG=DIR keeps each worker's stderr there, to see what they did (reclaims, refused reports, retries).
    const keep = process.env.FLEET_DEBUG
    if (keep) workers.forEach((w, i) => writeFileSync(join(keep, `w${i}-${kind}.err`), w.stderr()))
    await sched.stop()
    for (const w of workers) w.child.kill('SIGTERM')
    const exits = await Promise.all(workers.map((w) => w.exited))
    assert.equal(
      exits.map((e) => e.code),
      [130, 130, 130],
      'each worker stopped by SIGTERM while idle',
    )

    const final = await store.list()
    assert.equal(final.problems, [])
    assert.is(final.tasks.length, TASKS)
    const events = await store.readEvents()
    const why = (id: string) => events.filter((e) => e.taskId === id && e.type === 'task.transitioned').at(-1)?.payload.reason
    assert.equal(
      final.tasks.filter((t) => t.status !== 'review').map((t) => `${t.id} ${t.status}: ${why(t.id)}`),
      [],
    )
    const lines = workers.flatMap(workerLines)
    // A line with a reason is a report the store refused: not done, and never expected here.
    const doneIds = lines.filter((l) => l.outcome === 'done' && !l.reason).map((l) => l.taskId)
    assert.equal(dupes(doneIds), [], 'no task reported done twice')
    assert.is(new Set(doneIds).size, TASKS, 'every task reported done')
    assert.equal(
      lines.filter((l) => l.reason !== undefined || (l.outcome !== 'done' && l.outcome !== 'lost')),
      [],
    )
    assert.ok(doneIds.includes(doomedTask!), `the killed worker's task ${doomedTask} was done by another`)
    const reclaimed = sched.polls.flatMap((p) => p.actions.filter((a) => a.resolution === 'reclaimed').map((a) => a.taskId))
    if (server) assert.ok(reclaimed.includes(doomedTask!), 'on NATS the scheduler reclaimed it (no other board has its checkpoint)')
    else {
      // One machine: a worker of the same agent id takes the dead run up from its checkpoint, unless the scheduler was first.
      const resumed = lines.some((l) => l.taskId === doomedTask && l.runId === doomedRun)
      assert.ok(resumed || reclaimed.includes(doomedTask!), 'resumed by another worker or reclaimed')
    }

    checkEvents(
      events,
      final.tasks.map((t) => t.id),
    )
    const lost = lines.filter((l) => l.outcome === 'lost').length
    process.stderr.write(`fleet on ${kind}: ${phases.join(', ')}; ${reclaimed.length} reclaimed, ${lost} lost runs\n`)
  } finally {
    await sched?.stop()
    await Promise.all(procs.map(end))
    await store?.close().catch(() => {})
    await server?.cleanup()
    s.cleanup()
  }
}

/** The event stream of the whole run, per task: valid moves that balance, one into review, one completion. */
function checkEvents(events: AofEvent[], ids: string[]): void {
  const moves = events.filter((e) => e.type === 'task.transitioned')
  const invalid = moves.filter((e) => !isValidTransition(e.payload.from as never, e.payload.to as never))
  assert.equal(invalid, [], 'every logged move is an AOF/1 transition')
  const problems: string[] = []
  for (const id of ids) {
    const mine = moves.filter((e) => e.taskId === id)
    const net = new Map<string, number>()
    for (const e of mine) {
      net.set(String(e.payload.to), (net.get(String(e.payload.to)) ?? 0) + 1)
      net.set(String(e.payload.from), (net.get(String(e.payload.from)) ?? 0) - 1)
    }
    const unbalanced = [...net].filter(([status, n]) => n !== (status === 'review' ? 1 : status === 'ready' ? -1 : 0))
    if (unbalanced.length) problems.push(`${id}: moves do not balance ${JSON.stringify(unbalanced)}`)
    const intoReview = mine.filter((e) => e.payload.to === 'review').length
    if (intoReview !== 1) problems.push(`${id}: ${intoReview} moves into review`)
    const completed = events.filter((e) => e.type === 'task.completed' && e.taskId === id).length
    if (completed !== 1) problems.push(`${id}: ${completed} task.completed events`)
    // One run per lease: a second lease of a task is only after the scheduler took it back.
    const leases = events.filter((e) => e.type === 'lease.acquired' && e.taskId === id).length
    const reclaims = mine.filter((e) => e.payload.from === 'in-progress' && e.payload.to === 'ready').length
    if (leases !== reclaims + 1) problems.push(`${id}: ${leases} leases, ${reclaims} reclaims`)
  }
  assert.equal(problems, [])
}

function dupes(xs: string[]): string[] {
  return xs.filter((x, i) => xs.indexOf(x) !== i)
}

test('fleet on the filesystem store: 3 tea workers + a scheduler, 200 tasks, a worker SIGKILLed mid-task; each done once', () => run('fs'))

skipIf(
  test,
  natsServerMissing(),
  'fleet on NATS: 3 tea workers + a scheduler, 200 tasks, a worker SIGKILLed mid-task, the server down 5 s; each done once',
  () => run('nats'),
)

test.run()
