import type { Action } from '../types.ts'
import { llmCall } from './call.ts'
import { llmStream } from './stream.ts'

/** `llm.call` and `llm.stream`. */
export const llmActions: Action[] = [llmCall, llmStream]
