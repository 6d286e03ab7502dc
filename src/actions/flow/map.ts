/**
 * `flow.map`: one action, or a list of steps, for each item of a list, several at a time — TEA's
 * `type: dynamic_parallel` node is lowered onto it (agent/tea-nodes.ts). Results come back in item order.
 *
 * Each item's result is checkpointed as it finishes (in the store's memory, under the run and node), so a run
 * killed mid-way and resumed re-runs this node but not the items that had finished; the records are removed once
 * the node's items are all done. An item that fails stops the map (`fail_fast`, the default) or becomes
 * `{index, error: {code, message}}` in the results.
 *
 * `results: branches` gives each item's result the shape of TEA's `ParallelFlowResult` (what TEA's
 * `dynamic_parallel` hands its fan-in node, and what TEA's agents read): `{branch: "<node>[i]", index, success,
 * state, error, error_type, timing_ms}`, `state` being what the item's action or steps set plus the item and index
 * variables. A failed item (with `fail_fast: false`) is `success: false` with the error's message and code.
 *
 * `input` (TEA's `subgraph:` mode, whose sub-agent's nodes the loader gives as `steps`) starts each item's steps from
 * that mapping, rendered for the item, instead of from the node's state; the item's `state` is then the mapping plus
 * what the steps set, as TEA's sub-agent's final state is.
 */

import * as v from 'valibot'
import { errorMessage, isTeaError, TeaError } from '../../core/errors.ts'
import { isPlainObject, type State } from '../../core/util.ts'
import { defineAction, type ActionContext } from '../types.ts'
import { runSteps, stepSchema, type Step } from './steps.ts'

const params = v.pipe(
  v.object({
    items: v.pipe(v.array(v.unknown()), v.description('The list to map over (usually a template: "{{ state.files }}").')),
    item_var: v.optional(v.pipe(v.string(), v.description('The name each item has in templates and code (default item).')), 'item'),
    index_var: v.optional(v.pipe(v.string(), v.description("The name of the item's position (default index).")), 'index'),
    max_concurrency: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Items run at the same time (default 4).')),
      4,
    ),
    fail_fast: v.optional(
      v.pipe(v.boolean(), v.description("Stop at the first failed item (default); false keeps going and records each item's error.")),
      true,
    ),
    action: v.optional(
      v.pipe(
        v.object({ uses: v.string(), with: v.optional(v.record(v.string(), v.unknown())), output: v.optional(v.string()) }),
        v.description("The action each item runs; with output, the item's result is {<output>: the action's result}."),
      ),
    ),
    steps: v.optional(v.pipe(v.array(stepSchema), v.description('Or: steps each item runs in order on a copy of the state.'))),
    input: v.optional(
      v.pipe(
        v.record(v.string(), v.unknown()),
        v.description("With steps: the state each item's steps start from, rendered per item (a TEA sub-agent's input)."),
      ),
    ),
    results: v.optional(
      v.pipe(
        v.picklist(['values', 'branches']),
        v.description("values (default): each item's result as it is; branches: TEA's {branch, index, success, state, error, timing_ms}."),
      ),
      'values',
    ),
  }),
  v.check((p) => (p.action === undefined) !== (p.steps === undefined), 'give exactly one of `action` or `steps`'),
  v.check((p) => p.input === undefined || p.steps !== undefined, '`input` goes with `steps`'),
)

type Params = v.InferOutput<typeof params>

export const flowMap = defineAction({
  name: 'flow.map',
  description:
    'Runs an action, or steps, for each item of a list, several at a time; returns the results in item order. Each finished item is checkpointed.',
  params,
  raw: ['action', 'steps', 'input'],
  run: (p, ctx) => map(p, ctx),
})

async function map(p: Params, ctx: ActionContext): Promise<State> {
  const namespace = `flow.map:${ctx.runId}:${ctx.node}`
  const results: unknown[] = new Array(p.items.length)
  const pending: number[] = []
  for (let i = 0; i < p.items.length; i++) {
    const done = await ctx.store.memoryGet(namespace, String(i))
    if (done.found) results[i] = done.value
    else pending.push(i)
  }
  let failure: unknown
  const worker = async (): Promise<void> => {
    for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
      if (failure !== undefined || ctx.signal.aborted) return
      const extra = { [p.item_var]: p.items[next], [p.index_var]: next }
      const started = Date.now()
      try {
        const start = p.input && asState(ctx.render(p.input, extra, 'input'))
        const value = await runItem(p, ctx, extra, start)
        const state = start ? { ...start, ...asState(value) } : { ...asState(value), ...extra }
        results[next] = p.results === 'branches' ? branch(ctx, next, started, state) : value
      } catch (e) {
        if (p.fail_fast || !isTeaError(e)) {
          failure ??= e
          return
        }
        results[next] =
          p.results === 'branches'
            ? branch(ctx, next, started, extra, { error: errorMessage(e), error_type: e.code })
            : { index: next, error: { code: e.code, message: errorMessage(e) } }
      }
      await ctx.store.memoryPut(namespace, String(next), results[next])
    }
  }
  await Promise.all(Array.from({ length: Math.min(p.max_concurrency, Math.max(1, pending.length)) }, worker))
  if (failure !== undefined) {
    throw isTeaError(failure)
      ? failure
      : new TeaError('NODE_FAILED', `an item failed: ${errorMessage(failure)}`, { cause: failure, where: { node: ctx.node } })
  }
  if (ctx.signal.aborted) throw new TeaError('NODE_FAILED', 'cancelled while mapping', { where: { node: ctx.node } })
  await Promise.all(p.items.map((_, i) => ctx.store.memoryDelete(namespace, String(i))))
  return { result: results }
}

async function runItem(p: Params, ctx: ActionContext, extra: Record<string, unknown>, start?: State): Promise<unknown> {
  if (p.action) {
    const params = ctx.render(p.action.with ?? {}, extra, 'action.with')
    const result = await ctx.invoke(p.action.uses, params)
    return p.action.output === undefined ? result : { [p.action.output]: result }
  }
  return runSteps(p.steps as Step[], ctx, start ?? (ctx.state as State), extra, 'steps')
}

/** One item's result as TEA's ParallelFlowResult (its JSON form; TEA's Python view is src/python/glue.ts). */
function branch(ctx: ActionContext, index: number, started: number, state: State, failed?: { error: string; error_type: string }): State {
  return {
    branch: `${ctx.node}[${index}]`,
    index,
    success: failed === undefined,
    state,
    error: failed?.error ?? null,
    ...(failed && { error_type: failed.error_type }),
    timing_ms: Date.now() - started,
  }
}

/** TEA's rule for a branch's state: a mapping as it is, anything else under `result`. */
function asState(value: unknown): State {
  return isPlainObject(value) ? value : { result: value }
}
