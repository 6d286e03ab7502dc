import { rmSync } from 'node:fs'
import { pack } from 'msgpackr'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import type { RunEvent } from '../../src/core/events.ts'
import { isTeaError } from '../../src/core/errors.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import { headerRecord, planKey, restorePlan, subtaskRecord } from '../../src/planning/checkpoint.ts'
import { execute } from '../../src/planning/execute.ts'
import { executeParams } from '../../src/planning/execute-params.ts'
import { canonicalPlan } from '../../src/planning/plan.ts'
import type { Plan, Subtask } from '../../src/planning/types.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'
import type { Store } from '../../src/store/types.ts'
import { plan, planningContext, reply, scriptedLlm } from './helpers.ts'
import { runExecute, statuses } from './execute-helpers.ts'
import { tempDir } from '../support/temp-dir.ts'

const dirs: string[] = []
function lmdbStore(): Store {
  const dir = tempDir('tea-plan-ckpt-')
  dirs.push(dir)
  return openLmdbStore(dir)
}
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Counts executions per subtask in a buffer shared with the workers. */
const counted = (ids: string[]) => ({
  run: `const i = ${JSON.stringify(ids)}.indexOf(subtask.id); Atomics.add(new Int32Array(state.runs), i, 1); return "ran " + subtask.id`,
})

test('001.3R-UNIT-009 a plan written as header and subtask records reads back with statuses and results', async () => {
  for (const store of [createMemoryStore(), lmdbStore()]) {
    const p = plan(
      [
        ['A', [], 'completed', { n: 1, s: 'x' }],
        ['B', ['A'], 'failed'],
        ['C', ['B'], 'skipped'],
        ['D', ['A']],
      ],
      { model: 'ollama:m' },
    )
    p.subtasks[1]!.error = 'boom'
    p.subtasks[1]!.attempts = 3
    await store.putPlanHeader('run1', planKey('node1', p.id), headerRecord(p))
    for (const s of p.subtasks.slice(0, 3))
      await store.putSubtask(
        'run1',
        planKey('node1', p.id),
        s.id,
        subtaskRecord(s, s.id === 'A' ? { value: s.result, stateUpdate: { k: 1 } } : undefined),
      )
    const back = (await restorePlan(store, 'run1', 'node1', p.id))!
    p.subtasks[0]!.attempts = 1
    p.subtasks[2]!.attempts = 1
    assert.equal(back.plan, p)
    assert.equal(back.updates.get('A')!.stateUpdate, { k: 1 })
    assert.is(await restorePlan(store, 'run1', 'other-node', p.id), undefined)
    await store.close()
  }
})

test("a restored plan keeps its rationale and a hand-written plan's own keys, and prints as the plan it was (canonicalPlan)", async () => {
  const store = createMemoryStore()
  const p = {
    ...plan([
      ['A', [], 'completed', 'a'],
      ['B', ['A']],
    ]),
    rationale: 'why',
    owner: 'me',
  } as Plan
  Object.assign(p.subtasks[1]!, { parent: 'g', timeout: 5, note: 'n' })
  await store.putPlanHeader('r', planKey('n', p.id), headerRecord(p))
  await store.putSubtask('r', planKey('n', p.id), 'A', subtaskRecord(p.subtasks[0]!))
  const back = (await restorePlan(store, 'r', 'n', p.id))!.plan
  assert.is(back.rationale, 'why')
  assert.is((back as Plan & { owner?: string }).owner, 'me')
  assert.is((back.subtasks[1] as Subtask & { note?: string }).note, 'n')
  // Finished in another order than it was declared in: result before attempts, the plan's keys shuffled.
  p.subtasks[0]!.attempts = 1
  const reversed = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).reverse()) as T
  const shuffled = { ...reversed(back), subtasks: back.subtasks.map((s) => reversed({ ...s, result: s.result })) }
  assert.is(JSON.stringify(canonicalPlan(shuffled)), JSON.stringify(canonicalPlan(p)))
  assert.equal(Object.keys(canonicalPlan(shuffled)), [
    'id',
    'goal',
    'strategy',
    'subtasks',
    'replan_count',
    'max_replans',
    'created_at',
    'rationale',
    'owner',
  ])
  assert.equal(Object.keys(canonicalPlan(shuffled).subtasks[1]!), [
    'id',
    'description',
    'dependencies',
    'parent',
    'timeout',
    'status',
    'note',
  ])
})

test('001.3R-UNIT-010 a finished subtask record costs a few bytes beyond its result', () => {
  const s = plan([['A', [], 'completed', 'toast is ready']]).subtasks[0]!
  const overhead = pack(subtaskRecord(s)).length - pack('toast is ready').length
  assert.ok(overhead <= 8, `overhead ${overhead} B`)
  const failed = { ...s, status: 'failed' as const, result: undefined, error: 'x', attempts: 3 }
  assert.ok(pack(subtaskRecord(failed)).length <= 16)
})

test('001.3R-UNIT-011 a corrupt plan checkpoint is CHECKPOINT_CORRUPT naming the run, not a crash', async () => {
  const store = createMemoryStore()
  await store.putPlanHeader('run9', planKey('n', 'plan_x'), { v: 1, plan: { subtasks: [{ id: 'A' }] } })
  await store.putSubtask('run9', planKey('n', 'plan_y'), 'A', { s: 99 })
  await store.putPlanHeader('run9', planKey('n', 'plan_y'), headerRecord(plan([['A', []]])))
  await store.putPlanHeader('run9', planKey('n', 'plan_z'), { garbage: true })
  for (const id of ['plan_x', 'plan_y', 'plan_z']) {
    try {
      await restorePlan(store, 'run9', 'n', id)
      assert.unreachable(id)
    } catch (e) {
      assert.ok(isTeaError(e, 'CHECKPOINT_CORRUPT'), String(e))
      assert.match((e as Error).message, 'run run9')
    }
  }
})

test('001.3R-INT-014 every finished subtask commits its own record, once; the header is written once', async () => {
  const store = createMemoryStore()
  const puts: string[] = []
  const headers: string[] = []
  const spy: Store = Object.assign(Object.create(store) as Store, {
    putSubtask: (r: string, p: string, id: string, rec: Record<string, unknown>) => (puts.push(id), store.putSubtask(r, p, id, rec)),
    putPlanHeader: (r: string, p: string, h: Record<string, unknown>) => (headers.push(p), store.putPlanHeader(r, p, h)),
  })
  const p = plan([
    ['A', []],
    ['B', ['A']],
    ['C', []],
    ['D', ['B', 'C']],
  ])
  const { out } = await runExecute({ plan: p, subtask_executor: { run: 'return subtask.id' } }, { store: spy })
  assert.equal([...puts].sort(), ['A', 'B', 'C', 'D'])
  assert.equal(headers, [planKey('test-node', 'plan_test')])
  const stored = (await store.getPlan('test-run', planKey('test-node', 'plan_test')))!
  assert.equal(stored.subtasks.get('D'), { s: 2, r: 'D' })
  assert.is(out.success, true)
})

async function crashAfter(store: Store, stopAt: string, runs: SharedArrayBuffer, ids: string[]) {
  const events: RunEvent[] = []
  let poll: NodeJS.Timeout | undefined
  const ctx = planningContext(scriptedLlm([]), { state: { runs }, store, runId: 'crash-run' })
  ctx.emit = (e) => {
    events.push(e)
    // "the power goes" once `stopAt` is running in its worker: it is in flight, with no record
    if (e.type === 'subtask' && e.id === stopAt && e.status === 'in_progress') {
      const counts = new Int32Array(runs)
      poll = setInterval(() => {
        if (Atomics.load(counts, ids.indexOf(stopAt)) > 0) {
          clearInterval(poll)
          ctx.abort(new Error('killed'))
        }
      }, 2)
    }
  }
  try {
    await execute(
      v.parse(executeParams, {
        plan: plan(ids.map((id, i) => [id, i === 0 ? [] : [ids[i - 1]!]])),
        parallel: false,
        subtask_executor: {
          run: `${counted(ids).run.replace('return', 'if (subtask.id === ' + JSON.stringify(stopAt) + ') await new Promise((r) => setTimeout(r, 5000)); return')}`,
        },
      }),
      ctx,
    )
    assert.unreachable('the run should have been cancelled')
  } catch (e) {
    assert.ok(isControlSignal(e, 'cancel'), String(e))
  } finally {
    clearInterval(poll)
    ctx.cleanup()
  }
  return events
}

test('001.3R-INT-015 execution resumes at the subtask that was in flight', async () => {
  const store = lmdbStore()
  const ids = ['1', '2', '3', '4', '5']
  const runs = new SharedArrayBuffer(4 * ids.length)
  await crashAfter(store, '3', runs, ids)
  assert.equal([...new Int32Array(runs)], [1, 1, 1, 0, 0], 'subtask 3 had started when the run stopped')
  const { out, events } = await runExecute(
    { plan: plan(ids.map((id, i) => [id, i === 0 ? [] : [ids[i - 1]!]])), parallel: false, subtask_executor: counted(ids) },
    { store, runId: 'crash-run', state: { runs } },
  )
  assert.equal(
    events.filter((e) => e.status === 'in_progress').map((e) => e.id),
    ['3', '4', '5'],
  )
  assert.equal(statuses(out.plan), { 1: 'completed', 2: 'completed', 3: 'completed', 4: 'completed', 5: 'completed' })
  await store.close()
})

test('001.3R-INT-016 completed subtasks are not executed again on resume; their results come from the checkpoint', async () => {
  const store = lmdbStore()
  const ids = ['A', 'B', 'C', 'D']
  const runs = new SharedArrayBuffer(4 * ids.length)
  await crashAfter(store, 'C', runs, ids)
  const { out } = await runExecute(
    { plan: plan(ids.map((id, i) => [id, i === 0 ? [] : [ids[i - 1]!]])), parallel: false, subtask_executor: counted(ids) },
    { store, runId: 'crash-run', state: { runs } },
  )
  assert.equal([...new Int32Array(runs)], [1, 1, 2, 1], 'A and B ran once; C ran again (it was in flight); D once')
  assert.equal(out.subtask_results, { A: 'ran A', B: 'ran B', C: 'ran C', D: 'ran D' })
  // a finished plan executed again in the same run and node is answered from its records
  const again = await runExecute(
    { plan: plan(ids.map((id, i) => [id, i === 0 ? [] : [ids[i - 1]!]])), parallel: false, subtask_executor: counted(ids) },
    { store, runId: 'crash-run', state: { runs } },
  )
  assert.equal([...new Int32Array(runs)], [1, 1, 2, 1])
  assert.is(again.out.success, true)
  await store.close()
})

test('a replanned plan resumes from its recorded structure: no second replan, finished replacements not rerun', async () => {
  const store = lmdbStore()
  const ids = ['A', 'B', 'B2', 'C2']
  const runs = new SharedArrayBuffer(4 * ids.length)
  const original = () =>
    plan(
      [
        ['A', []],
        ['B', ['A']],
      ],
      { model: 'ollama:planner' },
    )
  const code = `${counted(ids).run.replace('return', 'if (subtask.id === "B") throw new Error("B is broken"); if (subtask.id === "C2" && Atomics.load(new Int32Array(state.runs), 3) === 1) await new Promise((r) => setTimeout(r, 5000)); return')}`
  const llm = scriptedLlm([
    reply([
      { id: 'B2', description: 'instead of B', dependencies: ['A'] },
      { id: 'C2', description: 'then', dependencies: ['B2'] },
    ]),
  ])
  const ctx = planningContext(llm, { state: { runs }, store, runId: 'replan-crash' })
  let poll: NodeJS.Timeout | undefined
  ctx.emit = (e) => {
    if (e.type === 'subtask' && e.id === 'C2' && e.status === 'in_progress') {
      poll = setInterval(() => {
        if (Atomics.load(new Int32Array(runs), 3) > 0) {
          clearInterval(poll)
          ctx.abort(new Error('killed'))
        }
      }, 2)
    }
  }
  try {
    await execute(
      v.parse(executeParams, { plan: original(), parallel: false, on_subtask_failure: 'replan', subtask_executor: { run: code } }),
      ctx,
    )
    assert.unreachable('the run should have been cancelled')
  } catch (e) {
    assert.ok(isControlSignal(e, 'cancel'), String(e))
  } finally {
    clearInterval(poll)
    ctx.cleanup()
  }
  assert.equal([...new Int32Array(runs)], [1, 1, 1, 1])
  const again = scriptedLlm([])
  const { out } = await runExecute(
    { plan: original(), parallel: false, on_subtask_failure: 'replan', subtask_executor: { run: code } },
    { store, runId: 'replan-crash', state: { runs }, llm: again },
  )
  assert.is(again.requests.length, 0, 'no second replan')
  assert.equal([...new Int32Array(runs)], [1, 1, 1, 2], 'only C2, which was in flight, ran again')
  assert.equal(statuses(out.plan), { A: 'completed', B2: 'completed', C2: 'completed' })
  assert.is(out.replan_count, 1)
  assert.is(out.success, true)
  await store.close()
})

test('001.3R-E2E-003 checkpoint records of a 100-subtask plan stay far below 1 MB (bar: < 16 KB)', async () => {
  const p = plan(Array.from({ length: 100 }, (_, i): [string, string[]] => [String(i + 1), i === 0 ? [] : [String(i)]]))
  let bytes = pack(headerRecord(p)).length
  for (const s of p.subtasks) bytes += pack(subtaskRecord({ ...s, status: 'completed', result: `done ${s.id}` })).length
  assert.ok(bytes < 16 * 1024, `${bytes} B`)
})

test.run()
