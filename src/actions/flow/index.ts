import * as v from 'valibot'
import type { State } from '../../core/util.ts'
import { defineAction, type Action } from '../types.ts'
import { flowMap } from './map.ts'
import { runSteps, stepSchema, type Step } from './steps.ts'
import { flowWhile } from './while.ts'

/** `flow.steps`: steps in order on a copy of the state (TEA's `steps:` node is lowered onto it); returns what they set. */
const flowSteps = defineAction({
  name: 'flow.steps',
  description: 'Runs steps (actions or run: code) in order on a copy of the state; returns every key they set.',
  params: v.object({ steps: v.pipe(v.array(stepSchema), v.minLength(1), v.description('The steps, in order.')) }),
  raw: ['steps'],
  run: (p, ctx) => runSteps(p.steps as Step[], ctx, ctx.state as State, {}, 'steps'),
})

/** Control flow inside a node: `flow.map` (an action or steps per item, concurrently), `flow.steps`, `flow.while`. */
export const flowActions: Action[] = [flowMap, flowSteps, flowWhile]
