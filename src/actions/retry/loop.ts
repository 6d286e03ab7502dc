/**
 * `retry.loop` (TEA-YAML-005): validate, and while the validation fails and retries remain, run the agent's
 * correction node and validate again.
 *
 * - The validator is any action returning `{valid, errors}`; one that throws, or returns no `valid`, counts as
 *   invalid with an error saying so (as TEA does), and errors that are not a list are wrapped in one.
 * - `validate_args` is rendered again before every validation, over the state as the corrections left it (TEA
 *   rendered it once, so a loop could never see its own fix).
 * - The correction node runs through the engine (`ctx.runNode`): its update is merged, and its `_retry_errors`
 *   and `_retry_count` are in its state. A correction that fails ends the loop, with the node and the reason in
 *   `_retry_errors` and `_retry_result.correction_error`.
 * - The result carries `_retry_count`, `_retry_errors` (`[{type, message, path?}]`), `_retry_result`,
 *   `_retry_exhausted` and, as TEA does, the final validation's own keys (`valid`, `errors`, …), over every key
 *   the corrections set.
 * - Progress is checkpointed after each validation and each correction (in the store's memory, under the run and
 *   node), so a run killed mid-loop resumes at the step it had reached, counters intact.
 */

import * as v from 'valibot'
import { errorMessage, isTeaError } from '../../core/errors.ts'
import { sleep, type State } from '../../core/util.ts'
import { defineAction, type ActionContext } from '../types.ts'

const params = v.object({
  validate: v.pipe(v.string(), v.minLength(1), v.description('The validation action: any action returning {valid, errors}.')),
  validate_args: v.optional(
    v.pipe(v.record(v.string(), v.unknown()), v.description("The validator's parameters, rendered before every attempt.")),
    {},
  ),
  correct: v.pipe(v.string(), v.minLength(1), v.description('The node of this agent that fixes what the validator found.')),
  max_retries: v.optional(
    v.pipe(
      v.number('must be a whole number ≥ 0'),
      v.integer('must be a whole number ≥ 0'),
      v.minValue(0, 'must be a whole number ≥ 0'),
      v.description('Corrections at most (default 1).'),
    ),
    1,
  ),
  retry_delay: v.optional(v.pipe(v.number(), v.minValue(0), v.description('Seconds to wait after each correction (default 0).')), 0),
})

type Params = v.InferOutput<typeof params>

export interface RetryError {
  type: string
  message: string
  path?: string
}

interface Progress {
  retries: number
  /** What the corrections have set so far. */
  update: State
  errors: RetryError[]
  /** The last validation's result, when it failed and its correction has not run yet. */
  failed?: Record<string, unknown>
}

export const retryLoop = defineAction({
  name: 'retry.loop',
  description:
    'Validates, and on failure runs a correction node and validates again, up to max_retries times; sets _retry_count, _retry_errors, _retry_result, _retry_exhausted.',
  params,
  raw: ['validate_args'],
  refers: { action: ['validate'], node: ['correct'] },
  run: (p, ctx) => loop(p, ctx),
})

async function loop(p: Params, ctx: ActionContext): Promise<State> {
  const namespace = `retry.loop:${ctx.runId}:${ctx.node}`
  const saved = await ctx.store.memoryGet(namespace, 'progress')
  const progress: Progress = saved.found ? (saved.value as Progress) : { retries: 0, update: {}, errors: [] }
  const save = (): Promise<void> => ctx.store.memoryPut(namespace, 'progress', progress)
  const done = async (result: State): Promise<State> => {
    await ctx.store.memoryDelete(namespace, 'progress')
    return result
  }
  for (;;) {
    const state = (): State => ({ ...ctx.state, ...progress.update, _retry_count: progress.retries, _retry_errors: progress.errors })
    let failed = progress.failed
    if (!failed) {
      const result = await validate(p, ctx, state())
      progress.errors = result.errors
      if (result.valid) {
        return done({
          ...progress.update,
          _retry_count: progress.retries,
          _retry_errors: [],
          _retry_result: result.raw,
          _retry_exhausted: false,
          ...result.raw,
        })
      }
      if (progress.retries >= p.max_retries) {
        return done({
          ...progress.update,
          _retry_count: progress.retries,
          _retry_errors: result.errors,
          _retry_result: result.raw,
          _retry_exhausted: true,
          ...result.raw,
        })
      }
      failed = progress.failed = result.raw
      await save()
    }
    try {
      Object.assign(progress.update, await ctx.runNode(p.correct, state()))
    } catch (e) {
      const message = `correction node '${p.correct}' failed: ${errorMessage(e)}`
      return done({
        ...progress.update,
        _retry_count: progress.retries,
        _retry_errors: [...progress.errors, { type: 'correction_error', message }],
        _retry_result: {
          ...failed,
          valid: false,
          correction_error: { node: p.correct, ...(isTeaError(e) && { code: e.code }), message: errorMessage(e) },
        },
        _retry_exhausted: false,
        valid: false,
      })
    }
    progress.retries++
    progress.failed = undefined
    await save()
    if (p.retry_delay > 0) await sleep(p.retry_delay * 1000, ctx.signal)
  }
}

/** Runs the validator over `state` (its args rendered now) and reads its verdict, whatever it returned. */
async function validate(
  p: Params,
  ctx: ActionContext,
  state: State,
): Promise<{ valid: boolean; errors: RetryError[]; raw: Record<string, unknown> }> {
  let raw: Record<string, unknown>
  try {
    const args = ctx.render(p.validate_args, { state }, 'validate_args')
    raw = await ctx.invoke(p.validate, args, state)
  } catch (e) {
    const error = { type: 'validation_error', message: `${p.validate} failed: ${errorMessage(e)}` }
    return { valid: false, errors: [error], raw: { valid: false, errors: [error] } }
  }
  if (typeof raw.valid !== 'boolean') {
    const error = { type: 'validation_error', message: `${p.validate} returned no boolean 'valid' key; counted as invalid` }
    return { valid: false, errors: [error, ...errorList(raw.errors)], raw: { ...raw, valid: false } }
  }
  return { valid: raw.valid, errors: errorList(raw.errors), raw }
}

/** A validator's errors as `[{type, message, path?}]`: strings and odd shapes are wrapped, not dropped. */
function errorList(errors: unknown): RetryError[] {
  if (errors === undefined || errors === null) return []
  const list = Array.isArray(errors) ? errors : [errors]
  return list.map((e) => {
    if (typeof e === 'object' && e !== null && !Array.isArray(e)) {
      const o = e as Record<string, unknown>
      return {
        type: typeof o.type === 'string' ? o.type : 'validation_error',
        message: typeof o.message === 'string' ? o.message : JSON.stringify(o),
        ...(typeof o.path === 'string' && { path: o.path }),
      }
    }
    return { type: 'validation_error', message: typeof e === 'string' ? e : JSON.stringify(e) }
  })
}
