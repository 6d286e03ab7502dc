/**
 * `reason.cot` (AC1): one model call that reasons before it answers. The prompt carries the thinking format and
 * any few-shot examples; the reply is asked for as JSON `{thinking, answer}` (with `answer_schema`, the answer's own
 * shape too) and read by `parseCot`, which falls back to `<thinking>…</thinking>` + `Answer:` delimiters. Returns
 * TEA's keys: `thinking`, `answer`, their `reasoning_*` aliases, `reasoning_trace`, `model`, `thinking_format`.
 */

import * as v from 'valibot'
import { defineAction } from '../actions/types.ts'
import { ask, conversation, modelEntries } from './model.ts'
import { parseCot } from './parse.ts'
import { COT_SCHEMA, cotPrompt, THINKING_FORMATS, type FewShot } from './prompts.ts'
import { traceFileEntry, Tracer } from './trace.ts'

const example = v.object({
  problem: v.string(),
  thinking: v.string(),
  answer: v.unknown(),
})

const params = v.object({
  problem: v.pipe(v.string(), v.minLength(1), v.description('The problem or question to reason about.')),
  thinking_format: v.optional(
    v.pipe(v.picklist(THINKING_FORMATS), v.description('How to reason: step_by_step (default), pros_cons, tree, first_principles.')),
    'step_by_step',
  ),
  few_shot_examples: v.optional(v.pipe(v.array(example), v.description('Worked examples: {problem, thinking, answer}.'))),
  few_shot: v.optional(v.pipe(v.array(example), v.description('Another name for few_shot_examples.'))),
  answer_schema: v.optional(
    v.pipe(v.record(v.string(), v.unknown()), v.description("A JSON Schema for the answer, sent with the reply's schema.")),
  ),
  trace_file: traceFileEntry,
  ...modelEntries,
})

export const cotAction = defineAction({
  name: 'reason.cot',
  description:
    'Chain-of-thought: the model reasons in a chosen format (few-shot examples optional), then answers; returns {thinking, answer, reasoning_trace}.',
  params,
  async run(p, ctx) {
    const examples: FewShot[] = [...(p.few_shot_examples ?? []), ...(p.few_shot ?? [])]
    const tracer = new Tracer(ctx, 'reason.cot', p.trace_file)
    const system = cotPrompt(p.thinking_format, examples)
    tracer.add('cot_request', { problem: p.problem, thinking_format: p.thinking_format, examples: examples.length })
    const schema = p.answer_schema ? { ...COT_SCHEMA, properties: { thinking: { type: 'string' }, answer: p.answer_schema } } : COT_SCHEMA
    const reply = await ask(ctx, p, conversation(system, p.problem), { schema })
    const { thinking, answer } = parseCot(reply.content)
    tracer.add('cot_response', { model: reply.model, thinking, answer })
    return {
      thinking,
      answer,
      reasoning_thinking: thinking,
      reasoning_answer: answer,
      reasoning_trace: await tracer.finish(),
      model: reply.model,
      thinking_format: p.thinking_format,
    }
  },
})
