import type { Action } from '../types.ts'
import { llmCall, llmChat } from './call.ts'
import { llmStream } from './stream.ts'

/** `llm.call`, `llm.stream` and TEA's `llm.chat`. */
export const llmActions: Action[] = [llmCall, llmStream, llmChat]
