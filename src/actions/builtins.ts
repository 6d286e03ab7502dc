/** The core actions every build has (SPEC §3.4). Feature actions join them in src/features.ts. */

import type { Action } from './types.ts'
import { fileActions } from './file/index.ts'
import { flowActions } from './flow/index.ts'
import { retryLoop } from './retry/loop.ts'
import { generatePrompt, validateExtraction } from './validate/extraction.ts'
import { httpActions } from './http/index.ts'
import { jsonActions } from './json/index.ts'
import { llmActions } from './llm/index.ts'
import { memoryActions } from './memory/index.ts'
import { ltmActions } from './ltm/index.ts'
import { toolsActions } from './tools/index.ts'
import { aofActions } from './aof/index.ts'
import { webActions } from './web/index.ts'
import { agentActions } from './agent/index.ts'
import { sessionActions } from './session/index.ts'
import { codeActions } from './code/index.ts'
import { schemaActions } from './schema/index.ts'
import { traceActions } from './trace/index.ts'
import { ratelimitActions } from './ratelimit/index.ts'

export function builtinActions(): Action[] {
  return [
    ...llmActions,
    ...jsonActions,
    ...memoryActions,
    ...ltmActions,
    ...httpActions,
    ...webActions,
    ...fileActions,
    ...toolsActions,
    ...aofActions,
    ...schemaActions,
    ...traceActions,
    ...ratelimitActions,
    ...agentActions,
    ...sessionActions,
    ...codeActions,
    ...flowActions,
    retryLoop,
    validateExtraction,
    generatePrompt,
  ]
}
