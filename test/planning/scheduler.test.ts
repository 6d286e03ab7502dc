/**
 * The plan scheduler (src/planning/scheduler.ts) as a state machine driven through fake hooks: no worker threads,
 * no store. Subtask runs and record commits are promises the test settles, so every phase can be observed.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { TeaError } from '../../src/core/errors.ts'
import { cancelled, isControlSignal } from '../../src/core/signals.ts'
import { PlanRun, type SchedulerHooks, type SchedulerOptions } from '../../src/planning/scheduler.ts'
import type { Plan, SubtaskInput, SubtaskOutput } from '../../src/planning/types.ts'
import { plan } from './helpers.ts'

interface Deferred<T> {
  promise: Promise<T>
  resolve(v: T): void
  reject(e: unknown): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

const tick = () => new Promise((r) => setImmediate(r))

/**
 * Fake hooks. Every run of a subtask waits in `runs` until the test finishes it (or `autoRun` answers at once);
 * every record waits in `commits` unless `autoCommit`. `log` holds what happened, in order: `start X` (a run
 * began), `commit X status` (a record was written), `emit X status` (an event was told).
 */
function harness(
  p: Plan,
  o: Partial<SchedulerOptions> & {
    autoRun?: (id: string, attempt: number) => unknown
    autoCommit?: boolean
    replan?: SchedulerHooks['replan']
  } = {},
) {
  const log: string[] = []
  const runs = new Map<string, Deferred<SubtaskOutput>>()
  const commits = new Map<string, Deferred<void>>()
  const inputs = new Map<string, SubtaskInput>()
  const records = new Map<string, { status: string; update: SubtaskOutput | undefined; code: string | undefined }>()
  const delays: number[] = []
  let active = 0
  let maxActive = 0
  const hooks: SchedulerHooks = {
    async run(s, input, attempt) {
      log.push(`start ${s.id}`)
      inputs.set(s.id, input)
      active++
      maxActive = Math.max(maxActive, active)
      try {
        if (o.autoRun) {
          await tick()
          const v = o.autoRun(s.id, attempt)
          if (v instanceof Error) throw v
          return v as SubtaskOutput
        }
        const d = deferred<SubtaskOutput>()
        runs.set(s.id, d)
        return await d.promise
      } finally {
        active--
      }
    },
    commit(s, update, code) {
      log.push(`commit ${s.id} ${s.status}`)
      const d = deferred<void>()
      commits.set(s.id, d)
      d.promise.then(
        () => records.set(s.id, { status: s.status, update, code }),
        () => {},
      )
      if (o.autoCommit !== false) d.resolve()
      return d.promise
    },
    emit(s, _plan, progress, extra) {
      log.push(
        `emit ${s.id} ${extra?.retrying ? 'retrying' : s.status}${extra?.code ? ` ${extra.code}` : ''} ${progress.completed}/${progress.total}`,
      )
    },
    replan: o.replan ?? (async () => assert.unreachable('no replan expected') as never),
    async sleep(ms) {
      delays.push(ms)
    },
  }
  const opts: SchedulerOptions = {
    concurrency: 2,
    onFailure: 'abort',
    maxRetries: 0,
    retryDelayMs: 100,
    backoffFactor: 2,
    onRetriesExhausted: 'abort',
    baseState: {},
    ...o,
  }
  const run = new PlanRun(p, opts, hooks)
  const finish = async (id: string, value: unknown, stateUpdate?: Record<string, unknown>) => {
    runs.get(id)!.resolve(stateUpdate ? { value, stateUpdate } : { value })
    await tick()
  }
  const fail = async (id: string, error: unknown) => {
    runs.get(id)!.reject(error)
    await tick()
  }
  const commit = async (id: string) => {
    commits.get(id)!.resolve()
    await tick()
  }
  const started = () => log.filter((l) => l.startsWith('start ')).map((l) => l.slice(6))
  return { run, log, runs, commits, inputs, records, delays, finish, fail, commit, started, maxActive: () => maxActive }
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  )

test('subtasks start in dependency order: a dependent only once the record of its last dependency has committed', async () => {
  const h = harness(
    plan([
      ['A', []],
      ['B', ['A']],
      ['C', ['A']],
      ['D', ['B', 'C']],
    ]),
    { autoCommit: false },
  )
  const outcome = h.run.run()
  await tick()
  assert.equal(h.started(), ['A'])
  assert.equal([h.run.phase('A'), h.run.phase('B'), h.run.phase('D')], ['running', 'pending', 'pending'])
  await h.finish('A', 'a')
  assert.is(h.run.phase('A'), 'committing')
  assert.equal(h.started(), ['A'], 'A has finished but its record has not committed: B and C wait')
  await h.commit('A')
  assert.is(h.run.phase('A'), 'done')
  assert.equal(h.started(), ['A', 'B', 'C'])
  await h.finish('C', 'c')
  await h.commit('C')
  assert.equal([h.run.phase('C'), h.run.phase('D')], ['done', 'pending'], 'D still waits for B')
  await h.finish('B', 'b')
  await h.commit('B')
  assert.equal(h.started(), ['A', 'B', 'C', 'D'])
  assert.equal(h.inputs.get('D')!.dependency_results, { B: 'b', C: 'c' })
  await h.finish('D', 'd')
  await h.commit('D')
  const out = await outcome
  assert.equal(
    out.plan.subtasks.map((s) => [s.id, s.status, s.result]),
    [
      ['A', 'completed', 'a'],
      ['B', 'completed', 'b'],
      ['C', 'completed', 'c'],
      ['D', 'completed', 'd'],
    ],
  )
  assert.is(out.stopped, undefined)
  assert.is(h.run.runState, 'finished')
  assert.equal(
    h.log.filter((l) => l.startsWith('emit A')),
    ['emit A in_progress 0/4', 'emit A completed 1/4'],
  )
})

test('the completed event is told only once the record has committed', async () => {
  const h = harness(plan([['A', []]]), { autoCommit: false })
  const outcome = h.run.run()
  await tick()
  await h.finish('A', 1)
  assert.equal(h.log, ['emit A in_progress 0/1', 'start A', 'commit A completed'])
  await h.commit('A')
  assert.equal(h.log.slice(3), ['emit A completed 1/1'])
  await outcome
})

test('at most `concurrency` subtasks run at once, and a freed slot takes the next ready subtask', async () => {
  const h = harness(
    plan([
      ['A', []],
      ['B', []],
      ['C', []],
      ['D', []],
      ['E', []],
    ]),
    { concurrency: 2 },
  )
  const outcome = h.run.run()
  await tick()
  assert.equal(h.started(), ['A', 'B'])
  assert.equal(
    ['C', 'D', 'E'].map((id) => h.run.phase(id)),
    ['ready', 'ready', 'ready'],
  )
  await h.finish('B', 'b')
  assert.equal(h.started(), ['A', 'B', 'C'])
  await h.finish('A', 'a')
  await h.finish('C', 'c')
  assert.equal(h.started(), ['A', 'B', 'C', 'D', 'E'])
  await h.finish('D', 'd')
  await h.finish('E', 'e')
  const out = await outcome
  assert.is(h.maxActive(), 2)
  assert.equal(Object.fromEntries(out.plan.subtasks.map((s) => [s.id, s.status])), {
    A: 'completed',
    B: 'completed',
    C: 'completed',
    D: 'completed',
    E: 'completed',
  })
})

test('abort: a failure is recorded with its code, nothing else starts, and the run stops saying which and why', async () => {
  const h = harness(
    plan([
      ['A', []],
      ['B', ['A']],
      ['C', []],
    ]),
    { concurrency: 1 },
  )
  const outcome = h.run.run()
  await tick()
  await h.fail('A', new TeaError('CODE_ERROR', 'broke A'))
  const out = await outcome
  assert.equal(h.started(), ['A'])
  assert.equal(out.stopped, { id: 'A', error: 'broke A', code: 'CODE_ERROR' })
  assert.equal(h.records.get('A'), { status: 'failed', update: undefined, code: 'CODE_ERROR' })
  assert.equal([h.run.phase('A'), h.run.phase('B'), h.run.phase('C')], ['failed', 'pending', 'ready'])
  assert.ok(h.log.includes('emit A failed CODE_ERROR 0/3'))
})

test('skip: the failed subtask and every pending dependent, transitively, are skipped and recorded; the rest runs', async () => {
  const h = harness(
    plan([
      ['A', []],
      ['B', ['A']],
      ['C', ['B']],
      ['D', []],
    ]),
    { onFailure: 'skip', autoRun: (id) => (id === 'A' ? new Error('no') : { value: id }) },
  )
  const out = await h.run.run()
  assert.equal(Object.fromEntries(out.plan.subtasks.map((s) => [s.id, s.status])), {
    A: 'skipped',
    B: 'skipped',
    C: 'skipped',
    D: 'completed',
  })
  assert.equal([...h.records.keys()].sort(), ['A', 'B', 'C', 'D'])
  assert.is(out.plan.subtasks[2]!.error, 'skipped: depends on A, which failed')
  assert.equal(h.started(), ['A', 'D'])
  assert.is(out.stopped, undefined)
})

test('retry: backoff delays grow by the factor, then the fallback applies', async () => {
  const h = harness(plan([['A', []]]), {
    onFailure: 'retry',
    maxRetries: 2,
    retryDelayMs: 100,
    backoffFactor: 3,
    onRetriesExhausted: 'skip',
    autoRun: () => new Error('flaky'),
  })
  const out = await h.run.run()
  assert.equal(h.delays, [100, 300])
  assert.is(out.plan.subtasks[0]!.status, 'skipped')
  assert.is(out.plan.subtasks[0]!.attempts, 3)
  assert.is(h.log.filter((l) => l.includes('retrying')).length, 2)
})

test('cancel: the run throws the signal once in-flight work has finished; the interrupted subtask has no record', async () => {
  const h = harness(
    plan([
      ['A', []],
      ['B', []],
      ['C', ['A']],
    ]),
    { concurrency: 2 },
  )
  const outcome = settle(h.run.run())
  await tick()
  await h.fail('A', cancelled())
  assert.equal([h.run.phase('A'), h.run.runState], ['ready', 'stopping'])
  assert.equal(h.started(), ['A', 'B'], 'nothing new starts')
  await h.finish('B', 'b')
  const r = await outcome
  assert.ok(!r.ok && isControlSignal(r.e, 'cancel'), String(!r.ok && r.e))
  assert.equal([...h.records.keys()], ['B'], 'B finished and was recorded before the signal was thrown; A has no record')
  assert.equal(h.started(), ['A', 'B'])
})

test('resume from recorded subtasks: finished ones do not run; the rest get their results and recorded state', async () => {
  const p = plan([
    ['A', [], 'completed', 'a'],
    ['B', ['A']],
    ['C', ['B']],
  ])
  const recordedUpdates = new Map<string, SubtaskOutput>([['A', { value: 'a', stateUpdate: { fromA: 1 } }]])
  const h = harness(p, { baseState: { base: true }, recordedUpdates, autoRun: (id) => ({ value: id.toLowerCase() }) })
  const out = await h.run.run()
  assert.equal(h.started(), ['B', 'C'])
  assert.equal(h.inputs.get('B'), { state: { base: true, fromA: 1 }, dependency_results: { A: 'a' } })
  assert.equal(
    out.plan.subtasks.map((s) => s.status),
    ['completed', 'completed', 'completed'],
  )
  assert.equal([...h.records.keys()], ['B', 'C'], 'A is not recorded again')
})

test('resume with a recorded failure under abort stops at once, with the recorded code', async () => {
  const p = plan([
    ['A', [], 'completed', 'a'],
    ['B', ['A'], 'failed'],
    ['C', ['B']],
  ])
  p.subtasks[1]!.error = 'broke B'
  const h = harness(p, { recordedCodes: new Map([['B', 'CODE_ERROR']]), autoRun: () => assert.unreachable('nothing runs') })
  const out = await h.run.run()
  assert.equal(out.stopped, { id: 'B', error: 'broke B', code: 'CODE_ERROR' })
  assert.equal(h.started(), [])
})

test('a record that fails to write stops the run: nothing more starts, and the failure is thrown once in-flight work ends', async () => {
  const h = harness(
    plan([
      ['A', []],
      ['B', []],
      ['C', ['A']],
    ]),
    { autoCommit: false },
  )
  const outcome = settle(h.run.run())
  await tick()
  await h.finish('A', 'a')
  h.commits.get('A')!.reject(new TeaError('STORE_FULL', 'disk full'))
  await tick()
  assert.is(h.run.phase('A'), 'committing', 'A never counts')
  assert.is(h.run.phase('C'), 'pending')
  await h.finish('B', 'b')
  const r = await outcome
  assert.ok(!r.ok)
  assert.is((r.e as TeaError).code, 'STORE_FULL')
  assert.equal(h.started(), ['A', 'B'])
})

test('replan: after a failure everything settles, the hook revises the plan, and the new subtasks run', async () => {
  const seen: string[] = []
  const h = harness(
    plan([
      ['A', []],
      ['B', ['A']],
    ]),
    {
      onFailure: 'replan',
      concurrency: 1,
      autoRun: (id) => (id === 'B' ? new Error('B broke') : { value: id }),
      replan: async (p, failure) => {
        seen.push(`${failure.id}: ${failure.error}`, ...p.subtasks.map((s) => `${s.id} ${s.status}`))
        return plan(
          [
            ['A', [], 'completed', 'A'],
            ['B2', ['A']],
          ],
          { replan_count: 1 },
        )
      },
    },
  )
  const out = await h.run.run()
  assert.equal(seen, ['B: B broke', 'A completed', 'B failed'])
  assert.equal(h.started(), ['A', 'B', 'B2'])
  assert.equal(
    out.plan.subtasks.map((s) => [s.id, s.status]),
    [
      ['A', 'completed'],
      ['B2', 'completed'],
    ],
  )
  assert.is(out.stopped, undefined)
})

test('a failed replan stops the run with both reasons', async () => {
  const h = harness(plan([['A', []]]), {
    onFailure: 'replan',
    autoRun: () => new Error('A broke'),
    replan: async () => {
      throw new TeaError('MAX_REPLANS_EXCEEDED', 'too many replans')
    },
  })
  const out = await h.run.run()
  assert.equal(out.stopped, { id: 'A', error: 'A broke; replanning failed: too many replans', code: 'MAX_REPLANS_EXCEEDED' })
})

test('concurrency 1 threads state through subtasks in the order they ran; parallel runs see only their ancestors', async () => {
  const rows: Array<[string, string[]]> = [
    ['A', []],
    ['B', []],
    ['C', ['A']],
  ]
  const each = (id: string) => ({ value: id, stateUpdate: { [id]: true } })
  const seq = harness(plan(rows), { concurrency: 1, baseState: { s: 0 }, autoRun: each })
  await seq.run.run()
  assert.equal(seq.inputs.get('C')!.state, { s: 0, A: true, B: true })
  const par = harness(plan(rows), { concurrency: 2, baseState: { s: 0 }, autoRun: each })
  const out = await par.run.run()
  assert.equal(par.inputs.get('C')!.state, { s: 0, A: true })
  assert.equal([...out.updates.keys()].sort(), ['A', 'B', 'C'])
})

test.run()
