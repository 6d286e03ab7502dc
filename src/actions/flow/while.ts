/**
 * `flow.while`: TEA's `type: while_loop` — run `body` (steps, as flow.steps runs them) again and again while
 * `condition` holds over the state as the body left it, at most `max_iterations` times (1–1000). The condition is
 * read as a goto condition is (a missing key is false) and checked before each iteration. Reaching the bound ends
 * the loop quietly, as TEA's Python runtime does, with `loop_exit: max_iterations` in the result (else
 * `condition`). Progress is checkpointed after each iteration, so a resumed run goes on from the last one done.
 */

import * as v from 'valibot'
import type { State } from '../../core/util.ts'
import { compileCondition } from '../../template/index.ts'
import { defineAction } from '../types.ts'
import { runSteps, stepSchema, type Step } from './steps.ts'

export const flowWhile = defineAction({
  name: 'flow.while',
  description: 'Runs steps again and again while a condition holds (at most max_iterations); returns what they set and why the loop ended.',
  params: v.object({
    condition: v.pipe(
      v.union([v.string(), v.boolean()]),
      v.description('Checked before each iteration, over the state (a missing key is false).'),
    ),
    max_iterations: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000), v.description('The most iterations (1–1000).')),
    body: v.pipe(v.array(stepSchema), v.minLength(1), v.description('The steps of one iteration.')),
  }),
  raw: ['condition', 'body'],
  async run(p, ctx) {
    const namespace = `flow.while:${ctx.runId}:${ctx.node}`
    const test = compileCondition(p.condition, { node: ctx.node, field: 'condition' }, { maxBytes: ctx.settings.max_template_bytes })
    const saved = await ctx.store.memoryGet(namespace, 'progress')
    let { iterations, update } = (saved.found ? saved.value : { iterations: 0, update: {} }) as { iterations: number; update: State }
    let exit: 'condition' | 'max_iterations' = 'condition'
    for (;;) {
      const state = { ...ctx.state, ...update }
      if (!test({ state, variables: ctx.variables, settings: ctx.settings })) break
      if (iterations >= p.max_iterations) {
        exit = 'max_iterations'
        break
      }
      Object.assign(update, await runSteps(p.body as Step[], ctx, state, {}, `body (iteration ${iterations + 1})`))
      iterations++
      await ctx.store.memoryPut(namespace, 'progress', { iterations, update })
    }
    await ctx.store.memoryDelete(namespace, 'progress')
    return { ...update, loop_iterations: iterations, loop_exit: exit }
  },
})
