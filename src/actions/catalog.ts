/**
 * The core actions as groups loaded on first use (registry.ts `createLazyRegistry`): the same actions as
 * builtins.ts, which imports them all at once for a registry built whole. test/catalog.test.ts holds the two to
 * the same list.
 */

import type { ActionGroup } from './registry.ts'

export const BUILTIN_GROUPS: readonly ActionGroup[] = [
  { prefixes: ['llm'], load: async () => (await import('./llm/index.ts')).llmActions },
  { prefixes: ['json'], load: async () => (await import('./json/index.ts')).jsonActions },
  { prefixes: ['memory'], load: async () => (await import('./memory/index.ts')).memoryActions },
  { prefixes: ['ltm'], load: async () => (await import('./ltm/index.ts')).ltmActions },
  { prefixes: ['http'], load: async () => (await import('./http/index.ts')).httpActions },
  { prefixes: ['web'], load: async () => (await import('./web/index.ts')).webActions },
  { prefixes: ['file'], load: async () => (await import('./file/index.ts')).fileActions },
  { prefixes: ['aof'], load: async () => (await import('./aof/index.ts')).aofActions },
  { prefixes: ['schema'], load: async () => (await import('./schema/index.ts')).schemaActions },
  { prefixes: ['trace'], load: async () => (await import('./trace/index.ts')).traceActions },
  { prefixes: ['agent'], load: async () => (await import('./agent/index.ts')).agentActions },
  { prefixes: ['session'], load: async () => (await import('./session/index.ts')).sessionActions },
  // These run or list other actions by name.
  { prefixes: ['code'], dispatches: true, load: async () => (await import('./code/index.ts')).codeActions },
  { prefixes: ['tools'], dispatches: true, load: async () => (await import('./tools/index.ts')).toolsActions },
  { prefixes: ['ratelimit'], dispatches: true, load: async () => (await import('./ratelimit/index.ts')).ratelimitActions },
  { prefixes: ['flow'], dispatches: true, load: async () => (await import('./flow/index.ts')).flowActions },
  { prefixes: ['retry'], dispatches: true, load: async () => [(await import('./retry/loop.ts')).retryLoop] },
  {
    prefixes: ['validate'],
    dispatches: true, // validate.extraction asks prolog.query
    load: async () => {
      const m = await import('./validate/extraction.ts')
      return [m.validateExtraction, m.generatePrompt]
    },
  },
]
