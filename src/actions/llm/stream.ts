import { defineAction } from '../types.ts'
import { llmParams } from './params.ts'
import { runLlm } from './run-llm.ts'

export const llmStream = defineAction({
  name: 'llm.stream',
  description: 'Like llm.call, but streams the reply: each token reaches the event stream (`llm_token`) as the model produces it.',
  params: llmParams,
  run: (params, ctx) => runLlm(params, ctx, (token) => ctx.emit({ type: 'llm_token', node: ctx.node, token })),
})
