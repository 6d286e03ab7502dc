import type { State } from '../../core/util.ts'
import { mergeLlmSettings } from '../../llm/settings.ts'
import type { ActionContext } from '../types.ts'
import type { LlmParams } from './params.ts'
import { toLlmRequest } from './params.ts'

/** One model call for a node: `settings.llm` under the node's params, the run's signal, optional token sink. */
export async function runLlm(params: LlmParams, ctx: ActionContext, onToken?: (token: string) => void): Promise<State> {
  const request = toLlmRequest(params)
  const result = await ctx.llm.call({
    ...mergeLlmSettings(ctx.settings.llm, request),
    messages: request.messages,
    signal: ctx.signal,
    ...(onToken ? { onToken } : {}),
  })
  return {
    content: result.content,
    ...(result.parsed === undefined ? {} : { parsed: result.parsed }),
    model: result.model,
    usage: result.usage,
    attempts: result.attempts,
  }
}
