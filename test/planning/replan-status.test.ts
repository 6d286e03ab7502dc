import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { replanAction, replanParams } from '../../src/planning/replan.ts'
import { statusAction, statusParams } from '../../src/planning/status.ts'
import type { Plan } from '../../src/planning/types.ts'
import { plan, planningContext, reply, scriptedLlm } from './helpers.ts'
import { teaRejection } from '../support/expect.ts'

const abc = () => {
  const p = plan(
    [
      ['A', [], 'completed', 'a-result'],
      ['B', ['A'], 'failed'],
      ['C', ['B'], 'pending'],
    ],
    { model: 'ollama:planner-model' },
  )
  p.subtasks[1]!.error = 'disk full'
  return p
}

async function runReplan(p: Plan, replies: string[], extra: Record<string, unknown> = {}) {
  const llm = scriptedLlm(replies)
  const ctx = planningContext(llm, { settings: { llm: { model: 'ollama:default-model' } } })
  const out = (await replanAction.run(v.parse(replanParams, { plan: p, ...extra }), ctx)) as { plan: Plan; replan_count: number }
  ctx.cleanup()
  return { out, llm }
}

test('001.3R-UNIT-026 replan keeps completed subtasks and their results unchanged', async () => {
  const { out } = await runReplan(abc(), [
    reply([
      { id: 'B2', description: 'free space then write', dependencies: ['A'] },
      { id: 'C2', description: 'finish', dependencies: ['B2'] },
    ]),
  ])
  const a = out.plan.subtasks.find((s) => s.id === 'A')!
  assert.equal(a, { id: 'A', description: 'do A', dependencies: [], status: 'completed', result: 'a-result' })
  assert.is(out.plan.subtasks[0], a)
})

test('001.3R-UNIT-027 replan removes failed and pending subtasks and puts the new ones in, pending', async () => {
  const { out } = await runReplan(abc(), [
    reply(
      [
        { id: 'B2', description: 'free space then write', dependencies: ['A'] },
        { id: 'C2', description: 'finish', dependencies: ['B2'] },
      ],
      { rationale: 'disk was full' },
    ),
  ])
  assert.equal(
    out.plan.subtasks.map((s) => [s.id, s.status]),
    [
      ['A', 'completed'],
      ['B2', 'pending'],
      ['C2', 'pending'],
    ],
  )
  assert.is(out.plan.replan_count, 1)
  assert.is(out.replan_count, 1)
  assert.is(out.plan.rationale, 'disk was full')
})

test('a new subtask reusing a completed id is renamed, and references to it follow', async () => {
  const { out } = await runReplan(abc(), [
    reply([
      { id: 'A', description: 'redo-ish', dependencies: [] },
      { id: 'X', description: 'then', dependencies: ['A'] },
    ]),
  ])
  assert.equal(
    out.plan.subtasks.map((s) => [s.id, s.dependencies]),
    [
      ['A', []],
      ['A.r1', []],
      ['X', ['A.r1']],
    ],
  )
})

test('001.3R-UNIT-028 past max_replans it is MAX_REPLANS_EXCEEDED with the count, and the plan is untouched', async () => {
  const p = abc()
  p.replan_count = 3
  p.max_replans = 3
  const before = JSON.stringify(p)
  const llm = scriptedLlm([])
  const ctx = planningContext(llm)
  const e = await teaRejection(replanAction.run(v.parse(replanParams, { plan: p }), ctx))
  assert.ok(isTeaError(e, 'MAX_REPLANS_EXCEEDED'))
  assert.match(e.message, '4 > 3')
  assert.equal(e.details, { replan_count: 3, max_replans: 3, plan_id: 'plan_test' })
  assert.is(JSON.stringify(p), before)
  assert.is(llm.requests.length, 0)
  ctx.cleanup()
})

test('001.3R-INT-012 replan asks the model that made the plan, not the default one', async () => {
  const { llm } = await runReplan(abc(), [reply([{ id: 'B2', description: 'x', dependencies: [] }])])
  assert.is(llm.requests[0]!.model, 'ollama:planner-model')
  assert.match(JSON.stringify(llm.requests[0]!.format), '"rationale"')
})

test('001.3R-INT-013 the replan prompt names the failed subtask and its error, and lists what is done', async () => {
  const { llm } = await runReplan(abc(), [reply([{ id: 'B2', description: 'x', dependencies: [] }])])
  const text = llm.requests[0]!.messages.map((m) => m.content).join('\n')
  assert.match(text, 'Subtask B failed with: disk full')
  assert.match(text, '- A: do A → a-result')
  assert.match(text, '- C [pending]: do C')
})

test('a replan reply that would form a cycle is rejected with the path', async () => {
  const e = await teaRejection(
    runReplan(abc(), [
      reply([
        { id: 'X', description: 'x', dependencies: ['Y'] },
        { id: 'Y', description: 'y', dependencies: ['X'] },
      ]),
    ]),
  )
  assert.ok(isTeaError(e, 'PLAN_CYCLE'))
  assert.match(errorMessage(e), 'X → Y → X')
  assert.match(errorMessage(e), /^invalid revised plan:/)
})

// --- plan.status ---

const fiveStates = () =>
  plan([
    ['A', [], 'completed', 1],
    ['B', [], 'completed', 2],
    ['C', ['A'], 'in_progress'],
    ['D', ['C'], 'pending'],
    ['E', ['B'], 'failed'],
  ])

function status(p: unknown, opts: Record<string, unknown> = {}) {
  const ctx = planningContext(scriptedLlm([]), { state: { plan: p } })
  const out = statusAction.run(v.parse(statusParams, opts), ctx) as { plan_status: Record<string, any> }
  ctx.cleanup()
  return out.plan_status
}

test('001.3R-UNIT-029 status counts each status and the total', () => {
  const s = status(fiveStates())
  assert.equal([s.completed, s.in_progress, s.pending, s.failed, s.skipped, s.total], [2, 1, 1, 1, 0, 5])
  assert.is(s.progress, 0.4)
  assert.is(s.success, false)
  assert.is(s.plan_id, 'plan_test')
})

test('001.3R-UNIT-030 include_completed: false leaves completed subtasks out of the list but not the counts', () => {
  const s = status(fiveStates(), { include_completed: false })
  assert.equal(
    s.subtasks.map((x: { id: string }) => x.id),
    ['C', 'D', 'E'],
  )
  assert.is(s.completed, 2)
  assert.equal(
    status(fiveStates()).subtasks.map((x: { id: string }) => x.id),
    ['A', 'B', 'C', 'D', 'E'],
  )
})

test('001.3R-UNIT-031 include_details: true adds descriptions, dependencies and results', () => {
  const s = status(fiveStates(), { include_details: true })
  assert.equal(s.subtasks[0], { id: 'A', status: 'completed', description: 'do A', dependencies: [], result: 1 })
  assert.equal(status(fiveStates()).subtasks[0], { id: 'A', status: 'completed' })
})

test('001.3R-UNIT-032 status of an empty or absent plan is all zeros', () => {
  for (const p of [{ subtasks: [] }, undefined]) {
    const s = status(p)
    assert.equal([s.completed, s.in_progress, s.pending, s.failed, s.skipped, s.total, s.progress], [0, 0, 0, 0, 0, 0, 0])
  }
})

test('format: mermaid draws the DAG with one class per status and safe labels', () => {
  const p = fiveStates()
  p.subtasks[0]!.description = 'say "hi" <now>'
  const m = status(p, { format: 'mermaid' }).mermaid as string
  assert.ok(m.startsWith('flowchart TD'))
  assert.match(m, 't0["A: say #quot;hi#quot; #lt;now#gt;"]:::completed')
  assert.match(m, 't0 --> t2')
  assert.match(m, 't2 --> t3')
  assert.match(m, 'classDef failed fill:#ffcdd2')
  assert.not.match(m, 'classDef skipped')
})

test.run()
