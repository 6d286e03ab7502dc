import type { Action } from '../types.ts'
import { llmCall, llmChat } from './call.ts'
import { llmEmbed } from './embed.ts'
import { llmStream } from './stream.ts'

/** `llm.call`, `llm.stream` and TEA's `llm.chat` and `llm.embed`. */
export const llmActions: Action[] = [llmCall, llmStream, llmChat, llmEmbed]
