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
