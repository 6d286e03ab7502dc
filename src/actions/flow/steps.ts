/**
 * Steps: a short list of sub-nodes run in order on a copy of the state, each one's update merged before the next
 * (TEA's `steps:`). A step is an action (`uses:`/`action:` + `with:` + `output:`) or JavaScript `run:` code,
 * rendered and compiled per call with the names the caller adds (a `dynamic_parallel` item). The result is the
 * accumulated update: every key the steps set.
 */

import * as v from 'valibot'
import { compileCode } from '../../code/compile.ts'
import { TeaError } from '../../core/errors.ts'
import { isPlainObject, type State } from '../../core/util.ts'
import type { ActionContext } from '../types.ts'

export const stepSchema = v.object({
  name: v.optional(v.string()),
  uses: v.optional(v.string()),
  action: v.optional(v.string()),
  with: v.optional(v.record(v.string(), v.unknown())),
  output: v.optional(v.union([v.string(), v.record(v.string(), v.unknown())])),
  run: v.optional(v.string()),
})

export type Step = v.InferOutput<typeof stepSchema>

/** Runs `steps` in order from `state`, with `extra` names in every template's scope; returns what they set. */
export async function runSteps(
  steps: readonly Step[],
  ctx: ActionContext,
  state: State,
  extra: Record<string, unknown>,
  field: string,
): Promise<State> {
  let current: State = { ...state, ...extra }
  const update: State = {}
  for (const [i, step] of steps.entries()) {
    if (ctx.signal.aborted) throw new TeaError('NODE_FAILED', 'cancelled between steps', { where: { node: ctx.node } })
    const where = `${field}[${i}]${step.name ? ` (${step.name})` : ''}`
    let result: State
    const uses = step.uses ?? step.action
    if (step.run !== undefined) {
      if (!ctx.settings.allow_inline_code) {
        throw new TeaError('INLINE_CODE_FORBIDDEN', 'run: code is forbidden by settings.allow_inline_code: false', {
          where: { node: ctx.node, field: where },
        })
      }
      const code = compileCode(step.run, { node: ctx.node, field: where }, { names: Object.keys(extra) })
      const scope = { state: current, variables: ctx.variables, ctx: {}, log: () => {}, extra, memoryMb: ctx.settings.run_memory_mb }
      result = await code(scope, ctx.settings.run_timeout * 1000)
    } else if (uses !== undefined) {
      const params = ctx.render(step.with ?? {}, { ...extra, state: current }, `${where}.with`)
      const raw = await ctx.invoke(uses, params, current)
      result = shaped(raw, step.output, ctx, current, extra, where)
    } else {
      throw new TeaError('AGENT_INVALID', `${where} needs uses: (an action) or run: (code)`, { where: { node: ctx.node } })
    }
    Object.assign(update, result)
    current = { ...current, ...result }
  }
  return update
}

function shaped(
  result: State,
  output: Step['output'],
  ctx: ActionContext,
  state: State,
  extra: Record<string, unknown>,
  where: string,
): State {
  if (output === undefined) return result
  if (typeof output === 'string') return { [output]: result }
  const mapped = ctx.render(output, { ...extra, state, result }, `${where}.output`)
  if (!isPlainObject(mapped)) throw new TeaError('NODE_FAILED', `${where}.output must render to a mapping`, { where: { node: ctx.node } })
  return mapped
}
