/** The parameters of `plan.execute`, with the upstream names (`on_subtask_failure`, `max_retries`, …). */

import * as v from 'valibot'
import { FAILURE_STRATEGIES } from './types.ts'

export const executorParams = v.pipe(
  v.object({
    action: v.optional(v.pipe(v.string(), v.description('A registered action run for each subtask (default llm.call).'))),
    uses: v.optional(v.pipe(v.string(), v.description('Alias of `action`.'))),
    with: v.optional(
      v.pipe(
        v.record(v.string(), v.unknown()),
        v.description('Parameters of the action, templated with subtask {id, description, dependencies}, dependency_results and state.'),
      ),
    ),
    run: v.optional(
      v.pipe(
        v.string(),
        v.description('A JavaScript function body given state, subtask, dependency_results and variables; its return value is the result.'),
      ),
    ),
  }),
  v.check((e) => e.run === undefined || (e.action === undefined && e.uses === undefined), 'give `run` or `action`, not both'),
)

export const executeParams = v.object({
  plan: v.optional(v.pipe(v.unknown(), v.description('The plan to run; default state.plan.'))),
  parallel: v.optional(v.pipe(v.boolean(), v.description('Run independent subtasks at the same time (default true).')), true),
  max_concurrent: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Subtasks at once, and worker threads (default min(4, cores)).')),
  ),
  subtask_executor: v.optional(executorParams),
  on_subtask_failure: v.optional(
    v.pipe(v.picklist(FAILURE_STRATEGIES), v.description('abort | skip | retry | replan (default abort).')),
    'abort',
  ),
  max_retries: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Retries per subtask with on_subtask_failure: retry (default 2).')),
    2,
  ),
  retry_delay: v.optional(
    v.pipe(v.number(), v.minValue(0), v.description('Seconds before the first retry (default 1); later ones grow by backoff_factor.')),
    1,
  ),
  backoff_factor: v.optional(v.pipe(v.number(), v.minValue(1), v.description('Growth of the retry delay (default 2).')), 2),
  on_retries_exhausted: v.optional(
    v.pipe(v.picklist(['abort', 'skip', 'replan']), v.description('What retry falls back to (default abort).')),
    'abort',
  ),
  max_replans: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Replans allowed; default the plan's own max_replans.")),
  ),
  timeout: v.optional(
    v.pipe(
      v.number(),
      v.gtValue(0),
      v.description(
        'Seconds a subtask may run before its worker is terminated (a subtask may set its own; run: code defaults to settings.run_timeout).',
      ),
    ),
  ),
})

export type ExecuteParams = v.InferOutput<typeof executeParams>
export type ExecutorParams = v.InferOutput<typeof executorParams>
