/**
 * Which checkpoint records a plan.execute finds: a plan revised by plan.replan is a new execution, a crash resumes
 * the same revision, a plan without an id keeps one id across reads, and a failure recorded before a crash gets
 * its strategy (a replan) again on resume.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { cancelled, isControlSignal } from '../../src/core/signals.ts'
import type { LlmClient, LlmRequest } from '../../src/llm/types.ts'
import { planKey } from '../../src/planning/checkpoint.ts'
import { execute } from '../../src/planning/execute.ts'
import { executeParams } from '../../src/planning/execute-params.ts'
import { readPlan } from '../../src/planning/plan.ts'
import { replanAction, replanParams } from '../../src/planning/replan.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import type { Plan } from '../../src/planning/types.ts'
import { plan, planningContext, reply, scriptedLlm } from './helpers.ts'
import { runExecute, statuses } from './execute-helpers.ts'

/** Counts executions per subtask id in a buffer shared with the workers; `fail` ids throw. */
const counting = (ids: string[], fail: string[] = []) => ({
  run: `const i = ${JSON.stringify(ids)}.indexOf(subtask.id); Atomics.add(new Int32Array(state.runs), i, 1);
    if (${JSON.stringify(fail)}.includes(subtask.id)) throw new Error("broke " + subtask.id)
    return "ran " + subtask.id`,
})

test('001.3R-INT-010 plan.execute → plan.replan → the same plan.execute node runs the revised plan, not the old records', async () => {
  const store = createMemoryStore()
  const ids = ['A', 'B', 'B2', 'C2']
  const runs = new SharedArrayBuffer(4 * ids.length)
  const first = await runExecute(
    {
      plan: plan(
        [
          ['A', []],
          ['B', ['A']],
        ],
        { model: 'ollama:planner' },
      ),
      parallel: false,
      subtask_executor: counting(ids, ['B']),
    },
    { store, runId: 'loop', state: { runs } },
  )
  assert.equal(statuses(first.out.plan), { A: 'completed', B: 'failed' })

  const llm = scriptedLlm([
    reply([
      { id: 'B2', description: 'instead of B', dependencies: ['A'] },
      { id: 'C2', description: 'then', dependencies: ['B2'] },
    ]),
  ])
  const ctx = planningContext(llm, { store, runId: 'loop', node: 'fix', state: { plan: first.out.plan } })
  const revised = (await replanAction.run(v.parse(replanParams, {}), ctx)).plan as Plan
  ctx.cleanup()
  assert.is(revised.id, first.out.plan.id, 'a replan keeps the plan id')

  const second = await runExecute(
    { plan: revised, parallel: false, subtask_executor: counting(ids, ['B']) },
    { store, runId: 'loop', state: { runs } },
  )
  assert.equal(statuses(second.out.plan), { A: 'completed', B2: 'completed', C2: 'completed' })
  assert.is(second.out.success, true)
  assert.equal(second.out.subtask_results, { A: 'ran A', B2: 'ran B2', C2: 'ran C2' })
  assert.equal([...new Int32Array(runs)], [1, 1, 1, 1], 'A is not run again; the new subtasks run once')

  // The same revision again (a crash-resume of the second node, say) is answered from its own records.
  const third = await runExecute(
    { plan: revised, parallel: false, subtask_executor: counting(ids) },
    { store, runId: 'loop', state: { runs } },
  )
  assert.is(third.out.success, true)
  assert.equal([...new Int32Array(runs)], [1, 1, 1, 1])
  assert.ok(await store.getPlan('loop', planKey('test-node', revised.id, 1)), 'revision 1 has its own header')
})

test('001.3R-INT-015 a plan written without an id gets the same id on every read, so its records are found again', async () => {
  const written = {
    goal: 'weigh',
    subtasks: [
      { id: 'flour', description: 'Weigh the flour' },
      { id: 'total', description: 'Add up', dependencies: ['flour'] },
    ],
  }
  const a = readPlan(structuredClone(written))
  const b = readPlan({ ...structuredClone(written), subtasks: written.subtasks.map((s) => ({ ...s, status: 'completed', result: 1 })) })
  assert.match(a.id, /^plan_[0-9a-f]{8}$/)
  assert.is(b.id, a.id, 'statuses and results do not change the id')
  assert.is.not(readPlan({ ...written, goal: 'weigh twice' }).id, a.id)
  assert.is.not(readPlan({ ...written, subtasks: [written.subtasks[0]!] }).id, a.id)

  const store = createMemoryStore()
  const runs = new SharedArrayBuffer(8)
  const executor = counting(['flour', 'total'])
  await runExecute({ plan: structuredClone(written), subtask_executor: executor }, { store, runId: 'no-id', state: { runs } })
  const again = await runExecute({ plan: structuredClone(written), subtask_executor: executor }, { store, runId: 'no-id', state: { runs } })
  assert.is(again.out.success, true)
  assert.equal([...new Int32Array(runs)], [1, 1], 'the second execution restored both subtasks from their records')
})

/** A model that never answers the replan: the "process" dies (the run is aborted) while waiting for it. */
function hangingModel(onCall: () => void): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = []
  return {
    requests,
    call(request) {
      requests.push(request)
      return new Promise((_, reject) => {
        request.signal?.addEventListener('abort', () => reject(cancelled()), { once: true })
        onCall()
      })
    },
    close: async () => {},
  }
}

test('001.3R-INT-010 a crash while an automatic replan waits for the model replans again on resume and runs the new subtasks', async () => {
  const store = createMemoryStore()
  const ids = ['A', 'B', 'C', 'B2']
  const runs = new SharedArrayBuffer(4 * ids.length)
  const original = () =>
    plan(
      [
        ['A', []],
        ['B', ['A']],
        ['C', ['B']],
      ],
      { model: 'ollama:planner' },
    )
  const params = () =>
    v.parse(executeParams, { plan: original(), parallel: false, on_subtask_failure: 'replan', subtask_executor: counting(ids, ['B']) })
  let ctx = planningContext(scriptedLlm([]), { state: { runs }, store, runId: 'replan-crash' })
  const hanging = hangingModel(() => ctx.abort(new Error('power cut')))
  ctx = Object.assign(ctx, { llm: hanging })
  try {
    await execute(params(), ctx)
    assert.unreachable('the run should have been cancelled')
  } catch (e) {
    assert.ok(isControlSignal(e, 'cancel'), String(e))
  } finally {
    ctx.cleanup()
  }
  assert.is(hanging.requests.length, 1, 'the replan was in flight')

  const llm = scriptedLlm([reply([{ id: 'B2', description: 'instead of B', dependencies: ['A'] }])])
  const { out } = await runExecute(
    { plan: original(), parallel: false, on_subtask_failure: 'replan', subtask_executor: counting(ids, ['B']) },
    { store, runId: 'replan-crash', state: { runs }, llm },
  )
  assert.is(llm.requests.length, 1, 'the replan was made again')
  assert.match(llm.requests[0]!.messages.at(-1)!.content, 'Subtask B failed with: subtask B: run: code threw: broke B')
  assert.equal(statuses(out.plan), { A: 'completed', B2: 'completed' })
  assert.is(out.replan_count, 1)
  assert.is(out.success, true)
  assert.equal([...new Int32Array(runs)], [1, 1, 0, 1], 'A and B ran once, before the crash; only B2 ran after')
})

test('a failure recorded before a crash under abort reports the same plan_error on resume, code included', async () => {
  const store = createMemoryStore()
  const ids = ['A', 'B', 'C']
  const runs = new SharedArrayBuffer(4 * ids.length)
  const p = () =>
    plan([
      ['A', []],
      ['B', ['A']],
      ['C', ['B']],
    ])
  const first = await runExecute(
    { plan: p(), parallel: false, subtask_executor: counting(ids, ['B']) },
    { store, runId: 'abort', state: { runs } },
  )
  // a resume of the same node: every subtask is answered from its records, and the outcome is the same
  const again = await runExecute(
    { plan: p(), parallel: false, subtask_executor: counting(ids, ['B']) },
    { store, runId: 'abort', state: { runs } },
  )
  assert.equal(again.out.plan_error, first.out.plan_error)
  assert.equal(again.out.plan_error, { id: 'B', error: 'subtask B: run: code threw: broke B', code: 'CODE_ERROR' })
  assert.equal(statuses(again.out.plan), statuses(first.out.plan))
  assert.equal([...new Int32Array(runs)], [1, 1, 0])
})

test('001.3R-INT-011 a later successful plan.execute clears the plan_error an earlier one left in state', async () => {
  const ok = await runExecute(
    { plan: plan([['A', []]]), subtask_executor: { run: 'return 1' } },
    { state: { plan_error: { id: 'X', error: 'old' } } },
  )
  assert.is(ok.out.plan_error, null)
  assert.ok('plan_error' in ok.out)
  const clean = await runExecute({ plan: plan([['A', []]]), subtask_executor: { run: 'return 1' } })
  assert.not.ok('plan_error' in clean.out, 'no key is added when there was none')
})

test.run()
