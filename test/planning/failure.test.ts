import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { isControlSignal } from '../../src/core/signals.ts'
import { execute } from '../../src/planning/execute.ts'
import { executeParams } from '../../src/planning/execute-params.ts'
import { plan, planningContext, reply, scriptedLlm } from './helpers.ts'
import { runExecute, statuses } from './execute-helpers.ts'

const failOn = (ids: string[]) => ({
  run: `if (${JSON.stringify(ids)}.includes(subtask.id)) throw new Error("broke " + subtask.id); return "ok " + subtask.id`,
})

test('001.3R-UNIT-021 on_subtask_failure: abort stops at the first failure; nothing after it starts', async () => {
  const p = plan([
    ['A', []],
    ['B', ['A']],
    ['C', ['B']],
  ])
  const { out, events } = await runExecute({ plan: p, parallel: false, on_subtask_failure: 'abort', subtask_executor: failOn(['B']) })
  assert.equal(statuses(out.plan), { A: 'completed', B: 'failed', C: 'pending' })
  assert.is(out.success, false)
  assert.equal(out.plan_error, { id: 'B', error: 'subtask B: run: code threw: broke B', code: 'CODE_ERROR' })
  assert.not.ok(events.some((e) => e.id === 'C'))
})

test('001.3R-INT-011 after an abort the completed subtasks and their results are returned', async () => {
  const p = plan([
    ['A', []],
    ['B', []],
    ['C', ['A', 'B']],
  ])
  const { out } = await runExecute({ plan: p, parallel: false, subtask_executor: failOn(['B']) })
  assert.equal(out.subtask_results, { A: 'ok A' })
  assert.equal(out.plan_progress, { completed: 1, failed: 1, skipped: 0, pending: 1, in_progress: 0, total: 3 })
})

test('001.3R-UNIT-022 on_subtask_failure: skip marks the failed subtask skipped and carries on', async () => {
  const p = plan([
    ['A', []],
    ['B', []],
    ['C', []],
  ])
  const { out } = await runExecute({ plan: p, parallel: false, on_subtask_failure: 'skip', subtask_executor: failOn(['A']) })
  assert.equal(statuses(out.plan), { A: 'skipped', B: 'completed', C: 'completed' })
  assert.match(out.plan.subtasks[0]!.error!, 'broke A')
  assert.is(out.success, false)
})

test('001.3R-UNIT-023 skipping a subtask skips everything depending on it, transitively', async () => {
  const p = plan([
    ['A', []],
    ['B', ['A']],
    ['C', ['B']],
  ])
  const { out } = await runExecute({ plan: p, on_subtask_failure: 'skip', subtask_executor: failOn(['A']) })
  assert.equal(statuses(out.plan), { A: 'skipped', B: 'skipped', C: 'skipped' })
  assert.equal([out.plan_progress.completed, out.plan_progress.skipped], [0, 3])
  assert.match(out.plan.subtasks[2]!.error!, 'depends on A')
})

// A flaky subtask: fails until a counter shared with the test reaches `n`.
const flaky = (n: number) => ({
  run: `const c = new Int32Array(state.tries); if (Atomics.add(c, 0, 1) < ${n}) throw new Error("flaky"); return "made it"`,
})

test('001.3R-UNIT-024 retry waits with exponential backoff: 100, 200, 400 ms', async () => {
  const tries = new SharedArrayBuffer(4)
  const delays: number[] = []
  const { out } = await runExecute(
    {
      plan: plan([['A', []]]),
      on_subtask_failure: 'retry',
      max_retries: 3,
      retry_delay: 0.1,
      backoff_factor: 2,
      subtask_executor: flaky(3),
    },
    { state: { tries }, deps: { sleep: async (ms) => void delays.push(ms) } },
  )
  assert.equal(delays, [100, 200, 400])
  assert.equal(statuses(out.plan), { A: 'completed' })
  assert.is(out.plan.subtasks[0]!.attempts, 4)
  assert.is(out.subtask_results.A, 'made it')
})

test('001.3R-UNIT-025 when retries run out the fallback strategy applies (skip, abort)', async () => {
  for (const fallback of ['skip', 'abort'] as const) {
    const tries = new SharedArrayBuffer(4)
    const delays: number[] = []
    const p = plan([
      ['A', []],
      ['B', ['A']],
      ['C', []],
    ])
    const { out, events } = await runExecute(
      {
        plan: p,
        parallel: false,
        on_subtask_failure: 'retry',
        max_retries: 2,
        retry_delay: 0.01,
        on_retries_exhausted: fallback,
        subtask_executor: { run: `if (subtask.id !== "A") return 1; ${flaky(99).run}` },
      },
      { state: { tries }, deps: { sleep: async (ms) => void delays.push(ms) } },
    )
    assert.is(new Int32Array(tries)[0], 3, 'one attempt plus two retries')
    assert.is(delays.length, 2)
    assert.is(out.plan.subtasks[0]!.attempts, 3)
    assert.is(events.filter((e) => e.retrying === true).length, 2)
    if (fallback === 'skip') assert.equal(statuses(out.plan), { A: 'skipped', B: 'skipped', C: 'completed' })
    else assert.equal(statuses(out.plan), { A: 'failed', B: 'pending', C: 'pending' })
  }
})

test('001.3R-INT-010 on_subtask_failure: replan calls the planner and then executes the new subtasks', async () => {
  const p = plan(
    [
      ['A', []],
      ['B', ['A']],
      ['C', ['B']],
    ],
    { model: 'ollama:planner' },
  )
  const llm = scriptedLlm([
    reply(
      [
        { id: 'B2', description: 'the other way', dependencies: ['A'] },
        { id: 'C2', description: 'finish', dependencies: ['B2'] },
      ],
      { rationale: 'B cannot work' },
    ),
  ])
  const { out, events } = await runExecute(
    { plan: p, parallel: false, on_subtask_failure: 'replan', subtask_executor: failOn(['B']) },
    { llm },
  )
  assert.is(llm.requests.length, 1)
  assert.is(llm.requests[0]!.model, 'ollama:planner')
  assert.match(llm.requests[0]!.messages.at(-1)!.content, 'Subtask B failed with: subtask B: run: code threw: broke B')
  assert.equal(statuses(out.plan), { A: 'completed', B2: 'completed', C2: 'completed' })
  assert.equal(out.subtask_results, { A: 'ok A', B2: 'ok B2', C2: 'ok C2' })
  assert.is(out.replan_count, 1)
  assert.is(out.success, true)
  assert.ok(events.some((e) => e.status === 'replanned'))
})

test('replanning stops at max_replans and then behaves as abort, saying why', async () => {
  const p = plan(
    [
      ['A', []],
      ['B', ['A']],
    ],
    { model: 'ollama:planner' },
  )
  const llm = scriptedLlm([reply([{ id: 'B2', description: 'again', dependencies: ['A'] }])])
  const { out } = await runExecute(
    { plan: p, parallel: false, on_subtask_failure: 'replan', max_replans: 1, subtask_executor: failOn(['B', 'B2']) },
    { llm },
  )
  assert.is(llm.requests.length, 1)
  assert.equal(statuses(out.plan), { A: 'completed', B2: 'failed' })
  assert.is(out.replan_count, 1)
  assert.equal((out.plan_error as { code: string }).code, 'MAX_REPLANS_EXCEEDED')
  assert.is(out.success, false)
})

test('stopping the run during a retry backoff is a cancel, not a failure, and leaves the subtask unrecorded', async () => {
  const ctx = planningContext(scriptedLlm([]))
  ctx.emit = (e) => {
    if (e.type === 'subtask' && (e as { retrying?: boolean }).retrying) setTimeout(() => ctx.abort(new Error('SIGTERM')), 20)
  }
  try {
    await execute(
      v.parse(executeParams, {
        plan: plan([['A', []]]),
        on_subtask_failure: 'retry',
        max_retries: 3,
        retry_delay: 30,
        subtask_executor: failOn(['A']),
      }),
      ctx,
    )
    assert.unreachable('should have been cancelled')
  } catch (e) {
    assert.ok(isControlSignal(e, 'cancel'), String(e))
  }
  const stored = await ctx.store.getPlan('test-run', 'test-node/plan_test')
  assert.is(stored?.subtasks.get('A'), undefined)
  ctx.cleanup()
})

test.run()
