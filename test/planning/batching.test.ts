/**
 * Batches in the plan scheduler (src/planning/batching.ts, scheduler.ts): short subtasks handed to a worker several
 * at a time. Driven through fake hooks whose batches the test plays the worker for, so every interleaving is
 * chosen; then through plan.execute on real worker threads. What must hold: a batch changes when its members
 * start, never what happens to each of them.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { TeaError } from '../../src/core/errors.ts'
import type { RunEvent } from '../../src/core/events.ts'
import { cancelled, isControlSignal } from '../../src/core/signals.ts'
import type { BatchEvents, BatchMember, BatchPolicy } from '../../src/planning/batching.ts'
import { BatchSizer } from '../../src/planning/batching.ts'
import { execute } from '../../src/planning/execute.ts'
import { executeParams } from '../../src/planning/execute-params.ts'
import { PlanRun, type SchedulerHooks, type SchedulerOptions } from '../../src/planning/scheduler.ts'
import type { Plan, SubtaskOutput } from '../../src/planning/types.ts'
import { createPool } from '../../src/pool/pool.ts'
import { plan, planningContext, scriptedLlm } from './helpers.ts'

const tick = () => new Promise((r) => setImmediate(r))

/** A batch as the test plays its worker: members start in order, each once; withdraw takes unstarted ones. */
class FakeBatch {
  next = 1
  readonly taken = new Set<number>()
  private endIt!: (back: number[]) => void
  readonly done = new Promise<number[]>((resolve) => (this.endIt = resolve))
  constructor(
    readonly ids: string[],
    readonly events: BatchEvents,
  ) {}
  withdraw(from = 0): number[] {
    const out: number[] = []
    for (let j = Math.max(from, this.next); j < this.ids.length; j++) if (!this.taken.has(j)) this.taken.add(j), out.push(j)
    return out
  }
  /** The running member ends; the next one starts unless it was taken back. */
  async settle(value: unknown, error?: unknown): Promise<void> {
    const i = this.next - 1
    this.events.settled(i, error === undefined ? { ok: true, out: { value } } : { ok: false, error })
    if (error === undefined && this.next < this.ids.length && !this.taken.has(this.next)) {
      this.events.started(this.next)
      this.next++
    }
    await tick()
  }
  ended = false
  /** The worker is done: the members that never started come back. */
  async end(): Promise<void> {
    this.ended = true
    const back: number[] = []
    for (let j = this.next; j < this.ids.length; j++) if (!this.taken.has(j)) back.push(j)
    this.endIt(back)
    await tick()
  }
  /** Every member from the running one on ends with its own id as its value. */
  async runAll(): Promise<void> {
    while (this.next <= this.ids.length) {
      const last = this.next === this.ids.length || this.taken.has(this.next)
      await this.settle(this.ids[this.next - 1])
      if (last) break
    }
    await this.end()
  }
}

/** A fair share of the ready subtasks per slot, whatever they took (the real policy is timed; see the first test). */
const fairShare: BatchPolicy = { record() {}, size: (ready, slots) => Math.max(1, Math.ceil(ready / slots)) }

/**
 * Fake hooks: a subtask run on its own answers at once (`fail` names those that throw, by attempt); records
 * commit at once. `log`: `run X` (alone), `batch X,Y` (handed over together), `emit X status c/t inProgress`.
 */
function harness(p: Plan, o: Partial<SchedulerOptions> & { fail?: (id: string, attempt: number) => unknown; noBatch?: boolean } = {}) {
  const log: string[] = []
  const batches: FakeBatch[] = []
  const records = new Map<string, string>()
  let maxInProgress = 0
  const hooks: SchedulerHooks = {
    async run(s, _input, attempt) {
      log.push(`run ${s.id}${attempt > 1 ? ` #${attempt}` : ''}`)
      await tick()
      const e = o.fail?.(s.id, attempt)
      if (e) throw e
      return { value: s.id } as SubtaskOutput
    },
    async commit(s) {
      records.set(s.id, s.status)
    },
    emit(s, _plan, progress, extra) {
      maxInProgress = Math.max(maxInProgress, progress.in_progress)
      log.push(`emit ${s.id} ${extra?.retrying ? 'retrying' : s.status} ${progress.completed}/${progress.total} ${progress.in_progress}`)
    },
    replan: async () => assert.unreachable('no replan expected') as never,
    async sleep() {},
    ...(o.noBatch
      ? {}
      : {
          runBatch(members: readonly BatchMember[], events: BatchEvents) {
            const ids = members.map((m) => m.subtask.id)
            if (ids.includes('unmakeable')) throw new TeaError('TEMPLATE_ERROR', 'bad template')
            log.push(`batch ${ids.join(',')}`)
            const b = new FakeBatch(ids, events)
            batches.push(b)
            return b
          },
        }),
  }
  const opts: SchedulerOptions = {
    concurrency: 2,
    onFailure: 'abort',
    maxRetries: 0,
    retryDelayMs: 100,
    backoffFactor: 2,
    onRetriesExhausted: 'abort',
    baseState: {},
    batchPolicy: fairShare,
    ...o,
  }
  const run = new PlanRun(p, opts, hooks)
  return { run, log, batches, records, maxInProgress: () => maxInProgress }
}

/** n independent subtasks s1…sn. */
const wide = (n: number): Plan => plan(Array.from({ length: n }, (_, i) => [`s${i + 1}`, []] as [string, string[]]))

const taken = (b: FakeBatch | undefined): number[] => [...b!.taken].sort()

/** Plays the worker for every batch handed over, until the run's outcome is known. */
async function playAll<T>(h: ReturnType<typeof harness>, outcome: Promise<T>): Promise<T> {
  let over = false
  outcome.then(
    () => (over = true),
    () => (over = true),
  )
  for (let guard = 0; !over && guard < 100; guard++) {
    for (const b of h.batches) if (b.next <= b.ids.length && !b.ended) await b.runAll()
    await tick()
  }
  return outcome
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  )

test('batch sizes: none until a subtask has been timed, none for long subtasks, a fair share of the ready ones, at most ~20 ms of work', () => {
  const sizer = new BatchSizer()
  assert.is(sizer.size(100, 2), 1, 'nothing timed yet')
  sizer.record(0.1)
  assert.is(sizer.size(300, 2), 64, 'at most 64')
  assert.is(sizer.size(100, 2), 50, 'half of the ready ones for each of two slots')
  assert.is(sizer.size(100, 1), 1, 'one slot: nothing to share, nothing gained')
  for (let i = 0; i < 30; i++) sizer.record(5)
  assert.is(sizer.size(100, 2), 4, '20 ms of 5 ms subtasks')
  for (let i = 0; i < 30; i++) sizer.record(30)
  assert.is(sizer.size(100, 2), 1, 'subtasks of 30 ms go one at a time')
})

test('short subtasks go out in batches; each member is told, recorded and counted on its own, and no more run at once than slots', async () => {
  const h = harness(wide(10))
  const outcome = h.run.run()
  await tick()
  assert.equal(
    h.log.filter((l) => l.startsWith('batch')),
    ['batch s1,s2,s3,s4,s5', 'batch s6,s7,s8'],
  )
  assert.equal(
    ['s1', 's2', 's6', 's7', 's9'].map((id) => h.run.phase(id)),
    ['running', 'queued', 'running', 'queued', 'ready'],
  )
  const [b1, b2] = h.batches
  await b1!.settle('s1')
  assert.equal([h.run.phase('s1'), h.run.phase('s2')], ['done', 'running'])
  assert.ok(h.log.includes('emit s1 completed 1/10 1'), h.log.join('\n'))
  await b1!.runAll()
  await b2!.runAll()
  const out = await playAll(h, outcome)
  assert.equal(
    out.plan.subtasks.map((s) => [s.id, s.status, s.result, s.attempts]),
    wide(10).subtasks.map((s) => [s.id, 'completed', s.id, 1]),
  )
  assert.is(h.records.size, 10)
  assert.is(h.maxInProgress(), 2)
  assert.equal(
    h.log.filter((l) => l.startsWith('emit s2'))[0],
    'emit s2 in_progress 1/10 2',
    'queued is not in progress: s2 was told started when its worker reached it, after s1 ended',
  )
})

test('abort: a failing member is recorded; the unstarted members of every batch come back; running ones finish; nothing else starts', async () => {
  const h = harness(wide(10))
  const outcome = h.run.run()
  await tick()
  const [b1, b2] = h.batches
  await b2!.settle('s6')
  await b1!.settle(undefined, new TeaError('CODE_ERROR', 'broke s1'))
  assert.is(h.run.runState, 'stopping')
  assert.equal(taken(b1), [1, 2, 3, 4])
  assert.equal(taken(b2), [2], 's7 had started; s8 had not')
  await b1!.end()
  await b2!.runAll()
  const out = await outcome
  assert.equal(out.stopped, { id: 's1', error: 'broke s1', code: 'CODE_ERROR' })
  const done = out.plan.subtasks.filter((s) => s.status !== 'pending').map((s) => `${s.id} ${s.status}`)
  assert.equal(done, ['s1 failed', 's6 completed', 's7 completed'])
  assert.equal([...h.records.keys()].sort(), ['s1', 's6', 's7'])
  assert.equal(
    ['s2', 's8', 's9'].map((id) => h.run.phase(id)),
    ['ready', 'ready', 'ready'],
  )
})

test('retry: a failed member is retried in its batch slot after the backoff; the rest of its batch comes back and runs', async () => {
  const h = harness(wide(10), {
    onFailure: 'retry',
    maxRetries: 2,
    fail: (id, attempt) => (id === 's1' && attempt < 3 ? new Error('flaky') : undefined),
  })
  const outcome = h.run.run()
  await tick()
  const [b1] = h.batches
  await b1!.settle(undefined, new Error('flaky'))
  await b1!.end()
  const out = await playAll(h, outcome)
  const s1 = out.plan.subtasks.find((s) => s.id === 's1')!
  assert.equal([s1.status, s1.attempts], ['completed', 3])
  assert.equal(
    h.log.filter((l) => l.startsWith('run s1 ')),
    ['run s1 #2', 'run s1 #3'],
  )
  assert.is(h.log.filter((l) => l.startsWith('emit s1 retrying')).length, 2)
  assert.ok(out.plan.subtasks.every((s) => s.status === 'completed'))
  assert.is(h.maxInProgress(), 2)
})

test('skip: a failing member and its dependents are skipped; the unstarted rest of its batch comes back and runs', async () => {
  const p = plan([
    ['s1', []],
    ['s2', []],
    ['s3', []],
    ['s4', []],
    ['after1', ['s1']],
  ])
  const h = harness(p, { onFailure: 'skip' })
  const outcome = h.run.run()
  await tick()
  assert.equal(h.log.filter((l) => l.startsWith('batch') || l.startsWith('run')).slice(0, 2), ['batch s1,s2', 'run s3'])
  const [b1] = h.batches
  await b1!.settle(undefined, new Error('no water'))
  await b1!.end()
  const out = await playAll(h, outcome)
  const status = Object.fromEntries(out.plan.subtasks.map((s) => [s.id, s.status]))
  assert.equal(status, { s1: 'skipped', s2: 'completed', s3: 'completed', s4: 'completed', after1: 'skipped' })
  assert.is(h.records.size, 5)
})

test('cancel: the running member is interrupted with no record, the unstarted come back, and the run throws the signal', async () => {
  const h = harness(wide(10))
  const outcome = settle(h.run.run())
  await tick()
  const [b1, b2] = h.batches
  await b1!.settle('s1')
  await b1!.settle(undefined, cancelled())
  assert.equal(taken(b1), [2, 3, 4])
  await b1!.end()
  await b2!.runAll()
  const r = await outcome
  assert.ok(!r.ok && isControlSignal(r.e, 'cancel'))
  assert.is(h.run.phase('s2'), 'ready')
  assert.ok(!h.records.has('s2'), 'the interrupted member has no record')
  assert.equal([...h.records.keys()].sort(), ['s1', 's6'], 's7 had not started either')
})

test('an idle slot takes back the later half of the unstarted members of a batch held up by a long one', async () => {
  const h = harness(wide(7))
  const outcome = h.run.run()
  await tick()
  assert.equal(
    h.log.filter((l) => l.startsWith('batch')),
    ['batch s1,s2,s3,s4', 'batch s5,s6'],
  )
  const [b1, b2] = h.batches
  await b2!.runAll() // then s7, which was ready, runs in that slot
  await tick()
  await tick()
  // Nothing is ready now, while s1 runs long with s2, s3 and s4 waiting behind it.
  assert.equal(taken(b1), [2, 3], 's3 and s4 were taken back: the later half of three, rounded up')
  assert.equal(h.log.filter((l) => l.startsWith('batch') || l.startsWith('run')).slice(2), ['run s7', 'run s3', 'run s4'])
  const out = await playAll(h, outcome)
  assert.ok(out.plan.subtasks.every((s) => s.status === 'completed' && s.attempts === 1))
  assert.is(h.records.size, 7)
  assert.equal(h.log.filter((l) => /^emit s[34] in_progress/.test(l)).length, 2, 's3 and s4 each started once')
})

test("a batch whose member's task cannot be made is not sent: batching stops and each subtask runs, and fails, on its own", async () => {
  const p = plan([
    ['unmakeable', []],
    ['s2', []],
    ['s3', []],
    ['s4', []],
  ])
  const h = harness(p, {
    onFailure: 'skip',
    fail: (id) => (id === 'unmakeable' ? new TeaError('TEMPLATE_ERROR', 'bad template') : undefined),
  })
  const out = await h.run.run()
  assert.equal(h.batches.length, 0)
  assert.equal(
    h.log.filter((l) => l.startsWith('run')),
    ['run unmakeable', 'run s2', 'run s3', 'run s4'],
  )
  assert.equal(out.plan.subtasks.find((s) => s.id === 'unmakeable')!.status, 'skipped')
})

test('a sequential run (concurrency 1) never batches: each subtask sees the state changes of those before it', async () => {
  const h = harness(wide(6), { concurrency: 1 })
  const out = await h.run.run()
  assert.equal(h.batches.length, 0)
  assert.ok(out.plan.subtasks.every((s) => s.status === 'completed'))
})

// --- through plan.execute, on worker threads ---

/**
 * Runs plan.execute with batches of up to `most` whatever the subtasks take, on a real pool whose batches are
 * counted. Returns the output, every event, and how many batches were handed over.
 */
async function executeInBatches(params: Record<string, unknown>, most = 8) {
  let batches = 0
  const ctx = planningContext(scriptedLlm([]))
  try {
    const out = (await execute(v.parse(executeParams, params), ctx, {
      batchPolicy: { record() {}, size: (ready, slots) => Math.min(most, Math.max(1, Math.ceil(ready / slots))) },
      createPool: (o) => {
        const pool = createPool(o)
        return {
          ...pool,
          close: () => pool.close(),
          runBatch(members, options) {
            batches++
            return pool.runBatch(members, options)
          },
        }
      },
    })) as { plan: Plan; success: boolean }
    return { out, events: ctx.events as RunEvent[], batches }
  } finally {
    ctx.cleanup()
  }
}

/** Per subtask id: how often its code logged, and its `subtask` events' statuses in order. */
function tally(events: RunEvent[]) {
  const ran = new Map<string, number>()
  const told = new Map<string, string[]>()
  let mostInProgress = 0
  for (const e of events) {
    if (e.type === 'log') {
      const id = /ran (\S+)/.exec(e.message)![1]!
      ran.set(id, (ran.get(id) ?? 0) + 1)
    }
    if (e.type === 'subtask') {
      told.set(e.id, [...(told.get(e.id) ?? []), e.status])
      mostInProgress = Math.max(mostInProgress, (e.progress as { in_progress: number }).in_progress)
    }
  }
  return { ran, told, mostInProgress }
}

test('on workers: a subtask failing inside a batch is skipped on its own; every other one runs once, is told once, and completes', async () => {
  const { out, events, batches } = await executeInBatches({
    plan: wide(60),
    max_concurrent: 2,
    on_subtask_failure: 'skip',
    subtask_executor: { run: 'console.log("ran " + subtask.id); if (subtask.id === "s37") throw new Error("broke"); return subtask.id' },
  })
  assert.ok(batches > 2, `${batches} batches`)
  const { ran, told, mostInProgress } = tally(events)
  for (const s of out.plan.subtasks) {
    assert.is(ran.get(s.id), 1, `${s.id} ran once`)
    assert.equal(told.get(s.id), ['in_progress', s.id === 's37' ? 'skipped' : 'completed'], s.id)
    assert.is(s.attempts, 1)
  }
  assert.equal(out.plan.subtasks.find((s) => s.id === 's37')!.error, 'subtask s37: run: code threw: broke')
  assert.ok(mostInProgress <= 2, `${mostInProgress} in progress at once`)
})

test('on workers: a subtask over its timeout inside a batch fails with SUBTASK_TIMEOUT on its own; its batch-mates run once, elsewhere or after', async () => {
  const p = wide(24)
  p.subtasks[4]!.timeout = 0.3
  const { out, events, batches } = await executeInBatches({
    plan: p,
    max_concurrent: 2,
    on_subtask_failure: 'skip',
    subtask_executor: { run: 'console.log("ran " + subtask.id); if (subtask.id === "s5") for (;;) {} return subtask.id' },
  })
  assert.ok(batches > 0)
  const { ran, told } = tally(events)
  const s5 = out.plan.subtasks[4]!
  assert.equal([s5.status, s5.error], ['skipped', 'subtask s5: ran over its timeout of 0.3 s and was stopped'])
  for (const s of out.plan.subtasks) {
    assert.is(ran.get(s.id), 1, `${s.id} ran once`)
    assert.is(told.get(s.id)!.length, 2, `${s.id}: ${told.get(s.id)}`)
    if (s.id !== 's5') assert.is(s.status, 'completed', s.id)
  }
})

test.run()
