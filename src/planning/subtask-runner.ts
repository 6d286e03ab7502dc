/**
 * How one subtask becomes one pool task. `run:` code goes as code (the worker runs it as a `run:` node's); an action
 * goes by name with its `with:` block rendered here in the main thread (templates see `subtask`,
 * `dependency_results`, `state`; the engine leaves the block to us through plan.execute's Action.raw, and we leave
 * the target action's own raw params to it); with no executor at all, `llm.call` gets a prompt built from the goal,
 * the subtask and its dependencies' results. Tasks get host methods so the worker reaches this run's model client,
 * store and event stream. Several subtasks may go to one worker as a batch (the scheduler decides, batching.ts);
 * each keeps its own time limit and its own errors.
 */

import type { ActionContext } from '../actions/types.ts'
import { unknownAction } from '../actions/registry.ts'
import { hostMethods, taskContext, type ActionTask } from '../actions/remote.ts'
import { compileCodeValue } from '../code/compile.ts'
import type { CodeTask } from '../code/task.ts'
import { TeaError, errorMessage, isTeaError } from '../core/errors.ts'
import type { MemberOutcome, Pool, PoolTask } from '../pool/index.ts'
import type { BatchEvents, BatchMember, SubtaskBatch } from './batching.ts'
import type { ExecutorParams } from './execute-params.ts'
import { subtaskPrompt } from './prompts.ts'
import type { Plan, Subtask, SubtaskInput, SubtaskOutput } from './types.ts'

export interface RunnerOptions {
  pool: Pool
  ctx: ActionContext
  executor: ExecutorParams | undefined
  /** Seconds; a subtask's own `timeout` wins. */
  timeout: number | undefined
}

export interface SubtaskRunner {
  run(plan: Plan, s: Subtask, input: SubtaskInput): Promise<SubtaskOutput>
  runBatch(plan: Plan, members: readonly BatchMember[], events: BatchEvents): SubtaskBatch
}

/** One subtask's pool task and how it is run. */
interface Prepared {
  task: CodeTask | ActionTask
  /** The time limit (s), if any. */
  seconds: number | undefined
  withHost: boolean
}

export function subtaskRunner(opts: RunnerOptions): SubtaskRunner {
  const { ctx, pool, executor } = opts
  const action = executor?.action ?? executor?.uses ?? 'llm.call'
  const raw = checkExecutor(ctx, executor, action)
  const host = hostMethods(ctx)
  // A host port costs a channel per task; code that never names ctx or console cannot use one.
  const codeHost = executor?.run !== undefined && /\b(ctx|console)\b/.test(executor.run)

  const prepare = (plan: Plan, s: Subtask, input: SubtaskInput): Prepared => {
    const where = { subtask: s.id }
    const subtask = { id: s.id, description: s.description, dependencies: [...s.dependencies] }
    let task: CodeTask | ActionTask
    if (executor?.run !== undefined) {
      if (!ctx.settings.allow_inline_code)
        throw new TeaError('INLINE_CODE_FORBIDDEN', 'run: code is forbidden by settings.allow_inline_code: false', { where })
      const args = { state: input.state, subtask, dependency_results: input.dependency_results, variables: ctx.variables }
      // The worker gives ctx the code's own state; it need not cross the thread twice.
      task = {
        kind: 'code',
        code: executor.run,
        args,
        trackState: true,
        memoryMb: ctx.settings.run_memory_mb,
        selfTimed: true,
        where,
        ...(codeHost ? { context: taskContext(ctx, {}) } : {}),
      }
    } else {
      const params =
        executor?.with !== undefined
          ? renderWith(ctx, executor.with, raw, { state: input.state, subtask, dependency_results: input.dependency_results })
          : action.startsWith('llm.')
            ? subtaskPrompt(plan.goal, subtask, input.dependency_results)
            : {}
      task = { kind: 'action', action, params, context: taskContext(ctx, input.state), where }
    }
    // run: code gets the agent's limit for run: code (settings.run_timeout) unless the plan or subtask sets one.
    const seconds = s.timeout ?? opts.timeout ?? (task.kind === 'code' ? positive(ctx.settings.run_timeout) : undefined)
    return { task, seconds, withHost: task.kind === 'action' || codeHost }
  }

  return {
    async run(plan, s, input) {
      const p = prepare(plan, s, input)
      try {
        const out = await pool.run(p.task, {
          signal: ctx.signal,
          ...(p.seconds ? { timeoutMs: p.seconds * 1000 } : {}),
          ...(p.withHost ? { host } : {}),
        })
        return outputOf(p.task, out)
      } catch (e) {
        throw subtaskError(e, p)
      }
    },
    runBatch(plan, members, events) {
      const prepared = members.map((m) => prepare(plan, m.subtask, m.input))
      return pool.runBatch(
        prepared.map((p) => ({ task: p.task as PoolTask, ...(p.seconds ? { timeoutMs: p.seconds * 1000 } : {}) })),
        {
          signal: ctx.signal,
          ...(prepared.some((p) => p.withHost) ? { host } : {}),
          onStart: events.started,
          onSettle: (i: number, o: MemberOutcome) => {
            const p = prepared[i]!
            events.settled(i, o.ok ? { ok: true, out: outputOf(p.task, o.result) } : { ok: false, error: subtaskError(o.error, p) })
          },
        },
      )
    },
  }
}

function outputOf(task: CodeTask | ActionTask, out: SubtaskOutput): SubtaskOutput {
  return task.kind === 'action' ? { value: resultOf(out.value) } : { ...out, value: out.value ?? null }
}

/** The pool's timeout, as the subtask's. */
function subtaskError(e: unknown, p: Prepared): unknown {
  if (isTeaError(e, 'POOL_ERROR') && e.details?.reason === 'timeout')
    return new TeaError('SUBTASK_TIMEOUT', `ran over its timeout of ${p.seconds} s and was stopped`, {
      where: p.task.where,
      details: { timeout: p.seconds },
    })
  return e
}

/**
 * The executor's `with:` rendered for one subtask, except the params its action renders itself (Action.raw, e.g.
 * json.transform's `mapping`), which go as written — as the engine does for a node's `with:`.
 */
function renderWith(
  ctx: ActionContext,
  params: Record<string, unknown>,
  raw: readonly string[],
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const rendered: Record<string, unknown> = {}
  const kept: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(params)) (raw.includes(k) ? kept : rendered)[k] = v
  return { ...(ctx.render(rendered, extra, 'subtask_executor.with') as Record<string, unknown>), ...kept }
}

/**
 * A misspelt action or `run:` code that does not compile would otherwise fail every subtask, one worker at a time;
 * both are found here, once, before anything runs.
 */
function checkExecutor(ctx: ActionContext, executor: ExecutorParams | undefined, action: string): readonly string[] {
  if (executor?.run !== undefined) {
    // The compile the worker makes (code/task.ts), so that what passes here compiles there.
    compileCodeValue(executor.run, { field: 'subtask_executor.run' }, { names: SUBTASK_NAMES })
    return []
  }
  const actions = ctx.listActions()
  const found = actions.find((a) => a.name === action)
  if (!found)
    throw unknownAction(
      action,
      actions.map((a) => a.name),
      { field: 'subtask_executor' },
    )
  return found.raw ?? []
}

/** The names a subtask's `run:` code sees beside state, variables, ctx and console (its task's args). */
const SUBTASK_NAMES = ['subtask', 'dependency_results']

function positive(n: unknown): number | undefined {
  return typeof n === 'number' && n > 0 ? n : undefined
}

/** An LLM reply is its parsed value or its text; any other action's result is kept whole. */
function resultOf(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && 'content' in value && 'model' in value) {
    const r = value as { content: unknown; parsed?: unknown }
    return r.parsed !== undefined ? r.parsed : r.content
  }
  return value
}
