import { defineAction } from '../types.ts'
import { llmParams } from './params.ts'
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
