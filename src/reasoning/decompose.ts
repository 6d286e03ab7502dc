/**
 * `reason.decompose` (AC4): the model splits a problem into sub-problems, each is solved on its own, in
 * parallel, and the model combines the answers. Recursion is real: a sub-problem the model marks `complex` is
 * itself decomposed, while the depth stays within `max_depth` (1: one split, no recursion); below that it is
 * solved as it is, and the synthesis works from what was solved.
 *
 * How a sub-problem is solved, and where:
 * - by default, one model call. These run at the same time on the main thread: a model call waits on the
 *   server, and a worker thread around it would add its start-up and nothing else.
 * - with `solver: {run: <code>}` or `solver: {uses: <action>, with: {…}}`, on the worker pool (SPEC §1: the Rust
 *   design's rayon), so CPU-bound work uses every core. The code sees `sub_problem`, `problem`, `state` and
 *   `variables`; the `with:` block is rendered with `sub_problem` and `problem` in scope.
 * `synthesis_prompt` replaces the built-in combining instructions; it is a template that sees `problem` and
 * `sub_answers` ([{problem, answer}]).
 */

import * as v from 'valibot'
import { hostMethods, taskContext, type ActionTask } from '../actions/remote.ts'
import { defineAction, type ActionContext } from '../actions/types.ts'
import type { CodeTask } from '../code/task.ts'
import { TeaError } from '../core/errors.ts'
import { extractJson } from '../core/json-extract.ts'
import { isPlainObject, type State } from '../core/util.ts'
import { createPool, defaultConcurrency, type Pool } from '../pool/pool.ts'
import { ask, conversation, modelEntries, type ModelParams } from './model.ts'
import { parseDecomposition } from './parse.ts'
import { DECOMPOSE_SCHEMA, decomposePrompt, SOLVE_SCHEMA, solvePrompt, SYNTHESIS_SCHEMA, synthesisPrompt } from './prompts.ts'
import { traceFileEntry, Tracer } from './trace.ts'

const atLeastOne = 'must be a whole number ≥ 1'

const solver = v.object({
  run: v.optional(v.pipe(v.string(), v.description('JavaScript that solves one sub-problem (sees sub_problem, problem, state).'))),
  uses: v.optional(v.pipe(v.string(), v.description('An action that solves one sub-problem.'))),
  action: v.optional(v.pipe(v.string(), v.description('Another name for uses.'))),
  with: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.description("The action's parameters (templates see sub_problem)."))),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0), v.description('Seconds one sub-problem may take on the pool.'))),
})

const params = v.object({
  problem: v.pipe(v.string(), v.minLength(1), v.description('The problem to break down and solve.')),
  max_depth: v.optional(
    v.pipe(
      v.number(atLeastOne),
      v.integer(atLeastOne),
      v.minValue(1, atLeastOne),
      v.description('Levels of decomposition at most (default 2; 1 = no recursion).'),
    ),
    2,
  ),
  max_sub_problems: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Sub-problems per split at most (default 5).')),
    5,
  ),
  synthesis_prompt: v.optional(
    v.pipe(v.string(), v.description('Instructions for combining the answers; a template that sees problem and sub_answers.')),
  ),
  solver: v.optional(v.pipe(solver, v.description('Solve sub-problems with code or an action on the worker pool instead of the model.'))),
  concurrency: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Worker threads for a solver (default min(4, cores)).')),
  ),
  trace_file: traceFileEntry,
  ...modelEntries,
})

type Params = v.InferOutput<typeof params>

export interface SubProblem {
  description: string
  complex: boolean
}

export interface SolvedPart {
  problem: string
  answer: unknown
  depth: number
  /** Present when the part was itself decomposed. */
  parts?: SolvedPart[]
}

export const decomposeAction = defineAction({
  name: 'reason.decompose',
  description:
    'Break a problem into sub-problems, solve them in parallel (recursing to max_depth), synthesize; returns {final_answer, sub_problems, sub_answers, reasoning_trace}.',
  params,
  raw: ['synthesis_prompt', 'solver'],
  async run(p, ctx) {
    if (p.solver && (p.solver.run !== undefined) === ((p.solver.uses ?? p.solver.action) !== undefined))
      throw new TeaError('INVALID_PARAMS', 'solver: give exactly one of run or uses', { where: { node: ctx.node, field: 'with.solver' } })
    const tracer = new Tracer(ctx, 'reason.decompose', p.trace_file)
    let pool: Pool | undefined
    const onPool = (): Pool => (pool ??= createPool({ maxThreads: p.concurrency ?? defaultConcurrency() }))
    try {
      const solve = leafSolver(p, ctx, onPool)
      const top = await decompose(p, ctx, tracer, solve, p.problem, 1)
      return {
        final_answer: top.answer,
        reasoning_answer: top.answer,
        sub_problems: (top.parts ?? []).map((s, i) => ({ id: i + 1, description: s.problem, dependencies: [] })),
        sub_answers: (top.parts ?? []).map((s, i) => ({ id: i + 1, problem: s.problem, answer: s.answer })),
        tree: top.parts ?? [],
        depth_used: depthOf(top),
        reasoning_trace: await tracer.finish(),
      }
    } finally {
      await pool?.close()
    }
  },
})

type Solve = (problem: string, sub: string, depth: number) => Promise<unknown>

async function decompose(p: Params, ctx: ActionContext, tracer: Tracer, solve: Solve, problem: string, depth: number): Promise<SolvedPart> {
  const mayRecurse = depth < p.max_depth
  const reply = await ask(ctx, p, conversation(decomposePrompt(p.max_sub_problems, mayRecurse), problem), { schema: DECOMPOSE_SCHEMA })
  const subs = readSubProblems(reply.content).slice(0, p.max_sub_problems)
  tracer.add('decompose', { depth, problem, model: reply.model, sub_problems: subs })
  const parts = await Promise.all(
    subs.map(async (s): Promise<SolvedPart> => {
      if (s.complex && mayRecurse) return decompose(p, ctx, tracer, solve, s.description, depth + 1)
      const answer = await solve(problem, s.description, depth)
      tracer.add('solve', { depth, problem: s.description, answer })
      return { problem: s.description, answer, depth }
    }),
  )
  const answer = await synthesize(p, ctx, problem, parts)
  tracer.add('synthesize', { depth, problem, final_answer: answer })
  return { problem, answer, depth, parts }
}

async function synthesize(p: Params, ctx: ActionContext, problem: string, parts: SolvedPart[]): Promise<unknown> {
  const sub_answers = parts.map((s) => ({ problem: s.problem, answer: s.answer }))
  let user = synthesisPrompt(problem, sub_answers)
  if (p.synthesis_prompt !== undefined)
    user = `${String(ctx.render(p.synthesis_prompt, { problem, sub_answers }, 'synthesis_prompt'))}\n\n${user}`
  const reply = await ask(ctx, p, conversation('You combine solved parts of a problem into one answer.', user), {
    schema: SYNTHESIS_SCHEMA,
  })
  return field(reply.content, ['final_answer', 'answer'])
}

function leafSolver(p: Params, ctx: ActionContext, onPool: () => Pool): Solve {
  const s = p.solver
  if (!s) {
    return async (problem, sub) => {
      const reply = await ask(ctx, p as ModelParams, conversation('You solve one part of a larger problem.', solvePrompt(problem, sub)), {
        schema: SOLVE_SCHEMA,
      })
      return field(reply.content, ['answer'])
    }
  }
  const where = { node: ctx.node, field: 'with.solver' }
  const timeoutMs = s.timeout === undefined ? undefined : s.timeout * 1000
  const options = { signal: ctx.signal, ...(timeoutMs && { timeoutMs }) }
  if (s.run !== undefined) {
    const code = s.run
    const host = /\b(ctx|console)\b/.test(code) ? hostMethods(ctx) : undefined
    return async (problem, sub) => {
      const task: CodeTask = {
        kind: 'code',
        code,
        args: { state: ctx.state, variables: ctx.variables, problem, sub_problem: sub },
        selfTimed: true,
        where,
        ...(host && { context: taskContext(ctx, {}) }),
      }
      return (await onPool().run(task, { ...options, ...(host && { host }) })).value ?? null
    }
  }
  const action = (s.uses ?? s.action) as string
  const host = hostMethods(ctx)
  return async (problem, sub) => {
    const params = s.with === undefined ? { sub_problem: sub } : ctx.render(s.with, { problem, sub_problem: sub }, 'solver.with')
    const task: ActionTask = { kind: 'action', action, params, context: taskContext(ctx, ctx.state as State), where }
    return (await onPool().run(task, { ...options, host })).value ?? null
  }
}

/** Sub-problems from the model's reply: `{description, complex}` objects when it wrote them, else plain lines. */
export function readSubProblems(content: string): SubProblem[] {
  const json = extractJson(content)
  const list = json.ok ? (isPlainObject(json.value) ? (json.value.sub_problems ?? json.value.subproblems) : json.value) : undefined
  if (Array.isArray(list) && list.some(isPlainObject)) {
    const subs = list.flatMap((item): SubProblem[] => {
      if (typeof item === 'string') return item.trim() ? [{ description: item.trim(), complex: false }] : []
      if (!isPlainObject(item)) return []
      const text = item.description ?? item.problem ?? item.question
      return typeof text === 'string' && text.trim() ? [{ description: text.trim(), complex: item.complex === true }] : []
    })
    if (subs.length > 0) return subs
  }
  return parseDecomposition(content).map((description) => ({ description, complex: false }))
}

/** The first of `keys` in the reply's JSON, else the reply's text. */
function field(content: string, keys: string[]): unknown {
  const json = extractJson(content)
  if (json.ok && isPlainObject(json.value)) for (const k of keys) if (k in json.value) return json.value[k]
  return content.trim()
}

function depthOf(part: SolvedPart): number {
  return Math.max(part.depth, ...(part.parts ?? []).map(depthOf))
}
