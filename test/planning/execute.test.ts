import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { execute } from '../../src/planning/execute.ts'
import { executeParams } from '../../src/planning/execute-params.ts'
import { createPool, type PoolOptions } from '../../src/pool/pool.ts'
import { plan, planningContext, scriptedLlm } from './helpers.ts'
import { runExecute, statuses } from './execute-helpers.ts'

const diamond = () =>
  plan([
    ['A', []],
    ['B', ['A']],
    ['C', ['A']],
    ['D', ['B', 'C']],
  ])
const echo = { run: 'return subtask.id + "(" + Object.keys(dependency_results).join(",") + ")"' }

test('001.3R-UNIT-018 subtasks run in dependency order: each starts after all of its dependencies finished', async () => {
  // Workers stamp start and end on a clock shared with the test (an atomic counter), so order is observed where
  // the work happens, not inferred from events.
  const ids = ['A', 'B', 'C', 'D']
  const clock = new SharedArrayBuffer(4 * 9)
  const stamped = {
    run: `const c = new Int32Array(state.clock); const i = ${JSON.stringify(ids)}.indexOf(subtask.id);
          Atomics.store(c, 1 + 2 * i, Atomics.add(c, 0, 1)); await new Promise((r) => setTimeout(r, 5));
          Atomics.store(c, 2 + 2 * i, Atomics.add(c, 0, 1)); return subtask.id + "(" + Object.keys(dependency_results).join(",") + ")"`,
  }
  const { out } = await runExecute({ plan: diamond(), subtask_executor: stamped, max_concurrent: 2 }, { state: { clock } })
  const c = new Int32Array(clock)
  const start = (id: string) => c[1 + 2 * ids.indexOf(id)]!
  const end = (id: string) => c[2 + 2 * ids.indexOf(id)]!
  for (const s of diamond().subtasks) for (const d of s.dependencies) assert.ok(end(d) < start(s.id), `${d} ends before ${s.id} starts`)
  assert.equal(out.subtask_results, { A: 'A()', B: 'B(A)', C: 'C(A)', D: 'D(B,C)' })
  assert.is(out.success, true)
})

test('001.3R-UNIT-019 sequential subtasks accumulate state: each sees what the ones before it changed', async () => {
  const p = plan([
    ['A', []],
    ['B', ['A']],
    ['C', ['B']],
  ])
  const { out } = await runExecute(
    {
      plan: p,
      parallel: false,
      subtask_executor: {
        run: 'state.total = (state.total ?? 0) + 1; state.trail = [...(state.trail ?? []), subtask.id]; return state.total',
      },
    },
    { state: { total: 10 } },
  )
  assert.equal(out.subtask_results, { A: 11, B: 12, C: 13 })
  assert.is(out.total, 13)
  assert.equal(out.trail, ['A', 'B', 'C'])
})

test('001.3R-UNIT-020 progress is reported after every subtask and ends in plan_progress', async () => {
  const { out, events } = await runExecute({ plan: diamond(), subtask_executor: echo, parallel: false })
  const done = events.filter((e) => e.status === 'completed').map((e) => (e.progress as { completed: number }).completed)
  assert.equal(done, [1, 2, 3, 4])
  assert.equal(out.plan_progress, { completed: 4, failed: 0, skipped: 0, pending: 0, in_progress: 0, total: 4 })
  assert.equal(statuses(out.plan), { A: 'completed', B: 'completed', C: 'completed', D: 'completed' })
  assert.is(out.plan.subtasks[1]!.result, 'B(A)')
})

// Concurrency is shown without timing: both subtasks bump a shared counter, then wait (bounded) for it to reach 2.
// Only if they run at the same time can each see the other's bump.
const rendezvous = {
  run: `const c = new Int32Array(state.shared); Atomics.add(c, 0, 1);
        const until = Date.now() + state.waitMs; while (Atomics.load(c, 0) < 2 && Date.now() < until) Atomics.wait(c, 1, 0, 5);
        return Atomics.load(c, 0)`,
}

test('001.3R-INT-005 independent subtasks run in parallel on the worker pool', async () => {
  const shared = new SharedArrayBuffer(8)
  const { out } = await runExecute(
    {
      plan: plan([
        ['B', []],
        ['C', []],
      ]),
      max_concurrent: 2,
      subtask_executor: rendezvous,
    },
    { state: { shared, waitMs: 10_000 } },
  )
  assert.equal(out.subtask_results, { B: 2, C: 2 })
})

test('001.3R-INT-006 max_concurrent 1 runs one subtask at a time (and so does parallel: false)', async () => {
  for (const params of [{ max_concurrent: 1 }, { parallel: false, max_concurrent: 4 }]) {
    const shared = new SharedArrayBuffer(8)
    const { out } = await runExecute(
      {
        plan: plan([
          ['B', []],
          ['C', []],
        ]),
        ...params,
        subtask_executor: rendezvous,
      },
      { state: { shared, waitMs: 150 } },
    )
    assert.equal(out.subtask_results, { B: 1, C: 2 })
  }
})

test('001.3R-INT-007 parallel branches get separate deep copies of the state', async () => {
  const p = plan([
    ['A', []],
    ['B', ['A']],
    ['C', ['A']],
  ])
  const run =
    'if (subtask.id === "A") { state.counter = 1; state.log = ["A"]; return state.counter } const seen = state.counter; state.counter++; state.log.push(subtask.id); return { seen, after: state.counter, log: state.log }'
  const { out } = await runExecute({ plan: p, max_concurrent: 2, subtask_executor: { run } }, { state: { counter: 0 } })
  assert.equal(out.subtask_results.B, { seen: 1, after: 2, log: ['A', 'B'] })
  assert.equal(out.subtask_results.C, { seen: 1, after: 2, log: ['A', 'C'] })
})

test('001.3R-INT-008 results of parallel branches merge deterministically at the convergence point', async () => {
  const p = plan([
    ['A', []],
    ['B', ['A']],
    ['C', ['A']],
    ['D', ['C', 'B']],
  ])
  const run =
    'state[subtask.id] = true; if (subtask.id === "B") await new Promise((r) => setTimeout(r, 30)); return { id: subtask.id, deps: dependency_results }'
  for (let i = 0; i < 3; i++) {
    const { out } = await runExecute({ plan: p, max_concurrent: 2, subtask_executor: { run } })
    assert.equal(Object.keys(out.subtask_results), ['A', 'B', 'C', 'D'])
    assert.equal(Object.keys((out.subtask_results.D as { deps: object }).deps), ['C', 'B'])
    assert.equal((out.subtask_results.D as { deps: unknown }).deps, {
      C: { id: 'C', deps: { A: { id: 'A', deps: {} } } },
      B: { id: 'B', deps: { A: { id: 'A', deps: {} } } },
    })
    assert.equal([out.A, out.B, out.C, out.D], [true, true, true, true])
  }
})

test('a subtask over its timeout is stopped (SUBTASK_TIMEOUT) and the plan carries on', async () => {
  const p = plan([
    ['spin', []],
    ['after', []],
  ])
  p.subtasks[0]!.timeout = 0.3
  const { out } = await runExecute({
    plan: p,
    max_concurrent: 1,
    on_subtask_failure: 'skip',
    subtask_executor: { run: 'if (subtask.id === "spin") for (;;) {} return "ok"' },
  })
  assert.equal(statuses(out.plan), { spin: 'skipped', after: 'completed' })
  assert.match(out.plan.subtasks[0]!.error!, 'ran over its timeout of 0.3 s')
  assert.is(out.subtask_results.after, 'ok')
})

test('run: subtasks get settings.run_timeout as their limit unless the plan sets one', async () => {
  const ctx = planningContext(scriptedLlm([]), { settings: { run_timeout: 0.3 } })
  const out = await execute(
    v.parse(executeParams, { plan: plan([['A', []]]), on_subtask_failure: 'skip', subtask_executor: { run: 'for (;;) {}' } }),
    ctx,
  )
  assert.match((out.plan as { subtasks: Array<{ error: string }> }).subtasks[0]!.error, 'ran over its timeout of 0.3 s')
  ctx.cleanup()
})

test('run: code is refused when settings.allow_inline_code is false', async () => {
  const ctx = planningContext(scriptedLlm([]), { settings: { allow_inline_code: false } })
  const out = await execute(v.parse(executeParams, { plan: plan([['A', []]]), subtask_executor: { run: 'return 1' } }), ctx)
  assert.equal((out.plan_error as { code: string }).code, 'INLINE_CODE_FORBIDDEN')
  ctx.cleanup()
})

test("a plan's worker threads stay for the whole plan: its pool's idle time-out outlasts any wait between subtasks", async () => {
  const made: PoolOptions[] = []
  await runExecute(
    { plan: diamond(), max_concurrent: 2, subtask_executor: echo },
    {
      deps: {
        createPool: (o) => {
          made.push(o)
          return createPool(o)
        },
      },
    },
  )
  assert.is(made.length, 1)
  assert.is(made[0]!.maxThreads, 2)
  assert.ok(made[0]!.idleTimeoutMs! >= 24 * 3600_000, `${made[0]!.idleTimeoutMs} ms`)
})

test.run()
