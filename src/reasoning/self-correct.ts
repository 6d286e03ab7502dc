/**
 * `reason.self_correct` (AC3): generate, then `improvement_rounds` times critique (the critic model) and improve
 * (the generator model). The generator and the critic are separate models when `generator_model` and
 * `critic_model` say so; each defaults to `model`, then `settings.llm`. `critic_prompt` is a template rendered with
 * `output` (the result under review) and `task`. Returns TEA's keys: `output`, `improvement_history` (one entry per
 * round: the output reviewed, the critique, the improved output), `rounds_completed`, the models, and the trace.
 */

import * as v from 'valibot'
import { defineAction, type ActionContext } from '../actions/types.ts'
import { extractJson } from '../core/json-extract.ts'
import { isPlainObject } from '../core/util.ts'
import { ask, conversation, modelEntries, type ModelParams } from './model.ts'
import { CRITIQUE_SCHEMA, critiquePrompt, critiqueRequest, GENERATE_SCHEMA, generatePrompt, improvePrompt } from './prompts.ts'
import { traceFileEntry, Tracer } from './trace.ts'

const wholeNumber = 'must be a whole number ≥ 0'

const params = v.object({
  task: v.pipe(v.string(), v.minLength(1), v.description('What to produce.')),
  generator_model: v.optional(v.pipe(v.string(), v.description('The model that writes and improves (default `model`).'))),
  critic_model: v.optional(v.pipe(v.string(), v.description('The model that reviews (default `model`).'))),
  improvement_rounds: v.optional(
    v.pipe(
      v.number(wholeNumber),
      v.integer(wholeNumber),
      v.minValue(0, wholeNumber),
      v.description('Critique-and-improve rounds after the first draft (default 2).'),
    ),
    2,
  ),
  critic_prompt: v.optional(v.pipe(v.string(), v.description('What the critic looks for; a template that sees `output` and `task`.'))),
  trace_file: traceFileEntry,
  ...modelEntries,
})

export interface Critique {
  issues: string[]
  suggestions: string[]
  score?: number
  /** The critic's text when it wrote no JSON. */
  text?: string
}

export interface ImprovementRound {
  round: number
  output: unknown
  critique: Critique
  improved_output: unknown
}

export const selfCorrectAction = defineAction({
  name: 'reason.self_correct',
  description:
    'Generate, then critique (critic_model) and improve (generator_model) for improvement_rounds; returns {output, improvement_history, reasoning_trace}.',
  params,
  raw: ['critic_prompt'],
  async run(p, ctx) {
    const tracer = new Tracer(ctx, 'reason.self_correct', p.trace_file)
    const generator = p.generator_model ?? p.model
    const critic = p.critic_model ?? p.model
    const draft = await generate(ctx, p, generator, p.task)
    tracer.add('generate', { model: draft.model, output: draft.output })
    let output = draft.output
    const history: ImprovementRound[] = []
    const models = { generator: draft.model, critic: '' }
    for (let round = 1; round <= p.improvement_rounds; round++) {
      const instructions =
        p.critic_prompt === undefined ? undefined : String(ctx.render(p.critic_prompt, { output, task: p.task }, 'critic_prompt'))
      const review = await ask(ctx, p, conversation(critiquePrompt(instructions), critiqueRequest(p.task, output)), {
        model: critic,
        schema: CRITIQUE_SCHEMA,
      })
      models.critic = review.model
      const critique = readCritique(review.content)
      tracer.add('critique', { round, model: review.model, ...critique })
      const improved = await generate(ctx, p, generator, improvePrompt(p.task, output, critique))
      tracer.add('improve', { round, model: improved.model, output: improved.output })
      history.push({ round, output, critique, improved_output: improved.output })
      output = improved.output
    }
    return {
      output,
      reasoning_answer: output,
      improvement_history: history,
      rounds_completed: history.length,
      generator_model: models.generator,
      ...(models.critic && { critic_model: models.critic }),
      reasoning_trace: await tracer.finish(),
    }
  },
})

/** One generator call: `{output}` when the model wrote it, else its whole reply. */
async function generate(
  ctx: ActionContext,
  p: ModelParams,
  model: string | undefined,
  user: string,
): Promise<{ output: unknown; model: string }> {
  const reply = await ask(ctx, p, conversation(generatePrompt(), user), { model, schema: GENERATE_SCHEMA })
  const json = extractJson(reply.content)
  const output = json.ok && isPlainObject(json.value) && 'output' in json.value ? json.value.output : reply.content.trim()
  return { output, model: reply.model }
}

/** The critic's reply as `{issues, suggestions, score?}`; prose becomes one issue, kept whole as `text`. */
export function readCritique(content: string): Critique {
  const json = extractJson(content)
  if (json.ok && isPlainObject(json.value)) {
    const o = json.value
    const critique: Critique = { issues: strings(o.issues), suggestions: strings(o.suggestions) }
    const score = o.score ?? o.improvement_score
    if (typeof score === 'number' && Number.isFinite(score)) critique.score = score
    return critique
  }
  const text = content.trim()
  return { issues: text ? [text] : [], suggestions: [], text }
}

function strings(value: unknown): string[] {
  if (value === undefined || value === null) return []
  const list = Array.isArray(value) ? value : [value]
  return list.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))
}
