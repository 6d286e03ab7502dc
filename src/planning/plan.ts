/**
 * Building and reading plans. `createPlan` is the one way a plan comes into being (decompose), and `readPlan` the
 * one way a plan is taken back from state or parameters (execute, replan, status): it checks the shape, fills what
 * an older or hand-written plan leaves out, and validates the DAG, so the rest of planning can trust a `Plan`.
 */

import { createHash, randomBytes } from 'node:crypto'
import * as v from 'valibot'
import { TeaError } from '../core/errors.ts'
import { toIssues } from '../core/issues.ts'
import { assertDag } from './dag.ts'
import type { Plan, PlanStrategy, ProposedSubtask } from './types.ts'
import { PLAN_STRATEGIES, SUBTASK_STATUSES, newSubtask } from './types.ts'

export const DEFAULT_MAX_REPLANS = 3

export interface NewPlan {
  goal: string
  strategy: PlanStrategy
  subtasks: readonly ProposedSubtask[]
  model?: string
  maxReplans?: number
}

export function createPlan(p: NewPlan): Plan {
  assertDag(p.subtasks)
  const plan: Plan = {
    id: `plan_${randomBytes(4).toString('hex')}`,
    goal: p.goal,
    strategy: p.strategy,
    subtasks: p.subtasks.map(newSubtask),
    replan_count: 0,
    max_replans: p.maxReplans ?? DEFAULT_MAX_REPLANS,
    created_at: Date.now(),
  }
  if (p.model !== undefined) plan.model = p.model
  return plan
}

const subtaskShape = v.looseObject({
  id: v.pipe(v.union([v.string(), v.number()]), v.transform(String)),
  description: v.string(),
  dependencies: v.optional(v.array(v.pipe(v.union([v.string(), v.number()]), v.transform(String))), []),
  status: v.optional(v.picklist(SUBTASK_STATUSES), 'pending'),
  result: v.optional(v.unknown()),
  error: v.optional(v.string()),
  attempts: v.optional(v.number()),
  parent: v.optional(v.string()),
  timeout: v.optional(v.number()),
})

export const planShape = v.looseObject({
  id: v.optional(v.string()),
  goal: v.optional(v.string(), ''),
  strategy: v.optional(v.picklist(PLAN_STRATEGIES), 'flat'),
  subtasks: v.array(subtaskShape),
  model: v.optional(v.string()),
  replan_count: v.optional(v.number(), 0),
  max_replans: v.optional(v.number(), DEFAULT_MAX_REPLANS),
  created_at: v.optional(v.number()),
  rationale: v.optional(v.string()),
})

/**
 * The id of a plan written without one (by hand, in initial_state): derived from what the plan says — goal and
 * subtask ids, descriptions and dependencies, not statuses or results — so every read of the same plan, including
 * the one after a crash, finds the same checkpoint records.
 */
export function contentId(
  goal: string,
  subtasks: ReadonlyArray<{ id: string; description: string; dependencies: readonly string[] }>,
): string {
  const shape = JSON.stringify([goal, subtasks.map((s) => [s.id, s.description, s.dependencies])])
  return `plan_${createHash('sha256').update(shape).digest('hex').slice(0, 8)}`
}

/**
 * A plan from state or params; a missing or malformed one is PLAN_INVALID. Messages name no node: the engine
 * places a failing node's errors at the node and its action.
 */
export function readPlan(value: unknown): Plan {
  if (value === undefined || value === null)
    throw new TeaError('PLAN_INVALID', 'no plan given and none in state.plan', {
      hint: 'run plan.decompose first, or pass `plan: "{{ state.plan }}"`',
    })
  const r = v.safeParse(planShape, value)
  if (!r.success) {
    // plan.decompose's whole result ({plan, plan_id, subtask_count}) instead of its plan: say where the plan is.
    const wrapped = typeof value === 'object' && 'plan' in value && 'plan_id' in value && v.is(planShape, (value as { plan: unknown }).plan)
    throw new TeaError(
      'PLAN_INVALID',
      wrapped ? "this is plan.decompose's whole result, not the plan: the plan is its `plan` key" : 'the plan is malformed',
      {
        ...(wrapped
          ? { hint: 'pass `plan: "{{ state.plan.plan }}"` (or give plan.decompose output: {plan: "{{ result.plan }}"})' }
          : { issues: toIssues(r.issues) }),
      },
    )
  }
  const p = r.output
  const plan = {
    ...p,
    id: p.id ?? contentId(p.goal, p.subtasks),
    created_at: p.created_at ?? Date.now(),
    subtasks: p.subtasks.map((s) => ({ ...s })),
  } as Plan
  assertDag(plan.subtasks)
  return plan
}

const PLAN_KEY_ORDER = ['id', 'goal', 'strategy', 'subtasks', 'model', 'replan_count', 'max_replans', 'created_at', 'rationale']
const SUBTASK_KEY_ORDER = ['id', 'description', 'dependencies', 'parent', 'timeout', 'status', 'attempts', 'result', 'error']

/**
 * The plan with its own keys and each subtask's in one fixed order (the known ones as listed above, then any others a
 * hand-written plan carries, in their own order; keys holding `undefined` left out), however they came to be set. A resumed run rebuilds the plan
 * from its records, and a subtask gets its result and attempts in the order it finished, so without this a
 * resumed run would print the same plan with its keys in another order than an uninterrupted one.
 */
export function canonicalPlan(plan: Plan): Plan {
  const out = ordered(plan, PLAN_KEY_ORDER)
  out.subtasks = plan.subtasks.map((s) => ordered(s, SUBTASK_KEY_ORDER))
  return out
}

function ordered<T extends object>(value: T, order: readonly string[]): T {
  const from = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of order) if (from[k] !== undefined) out[k] = from[k]
  for (const k of Object.keys(from)) if (!(k in out) && from[k] !== undefined) out[k] = from[k]
  return out as T
}
