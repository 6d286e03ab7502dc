import type { Action } from '../types.ts'
import { llmCall, llmChat, llmRetry } from './call.ts'
import { llmEmbed } from './embed.ts'
import { llmStream } from './stream.ts'
import { llmTools } from './tools.ts'

/** `llm.call`, `llm.stream` and TEA's `llm.chat`, `llm.embed`, `llm.retry` and `llm.tools`. */
export const llmActions: Action[] = [llmCall, llmStream, llmChat, llmEmbed, llmRetry, llmTools]
