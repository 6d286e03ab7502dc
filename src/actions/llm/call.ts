import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { llmFields, llmParams } from './params.ts'
import { runLlm } from './run-llm.ts'

export const llmCall = defineAction({
  name: 'llm.call',
  description:
    'Asks the model and returns {content, parsed?, model, usage, attempts}; `parsed` is the reply as JSON when `format` is given.',
  params: llmParams,
  run: (params, ctx) => runLlm(params, ctx),
})

/** TEA's `llm.chat`: `llm.call` by another name (`messages` is the usual input), with TEA's `tokens_used` as well. */
export const llmChat = defineAction({
  name: 'llm.chat',
  description: "As llm.call (TEA's name for a chat with messages); the result also has tokens_used.",
  params: llmParams,
  async run(params, ctx) {
    const result = await runLlm(params, ctx)
    const usage = result.usage as { prompt_tokens?: number; completion_tokens?: number } | undefined
    return { ...result, tokens_used: (usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0) }
  },
})

const retryParams = v.pipe(
  v.object({
    ...llmFields.entries,
    max_retries: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10), v.description('Retries of transient failures (default 3).')),
      3,
    ),
    base_delay: v.optional(v.pipe(v.number(), v.minValue(0), v.description("TEA's first backoff delay, s; tea keeps its own backoff."))),
    max_delay: v.optional(v.pipe(v.number(), v.minValue(0), v.description("TEA's longest backoff delay, s; tea keeps its own backoff."))),
  }),
  v.check((p) => p.prompt !== undefined || p.messages !== undefined, 'give `prompt` or `messages`'),
)

/**
 * TEA's `llm.retry`: deprecated in TEA for `llm.call` with `max_retries`, which it calls with max_retries 3. So
 * here: transient failures (429, 5xx, timeouts, lost connections; Retry-After honoured) are retried by tea's client
 * with its own backoff, so base_delay and max_delay are accepted and not used.
 */
export const llmRetry = defineAction({
  name: 'llm.retry',
  description: "TEA's llm.retry: llm.call retrying transient failures up to max_retries (default 3) times.",
  params: retryParams,
  run: ({ base_delay: _b, max_delay: _m, ...params }, ctx) => runLlm(params, ctx),
})
