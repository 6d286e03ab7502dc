/**
 * The core's actions, one family a line: the one list of them. A family is the actions whose names start with one of
 * its `prefixes` and a dot, in the module `load` imports, which `pick` takes them from.
 *
 * A NEW ACTION FAMILY IS ONE LINE HERE (nothing else lists the core's actions). `load` is the `import()` of its
 * module written out, so that esbuild keeps the module inside the bundle, to be run when first asked for
 * (src/catalog.ts: `tea run` evaluates only the families its agent names); the registry built whole requires the
 * same module (builtins.ts). A family whose actions run or list other actions by name says `dispatches`. Optional
 * features add theirs in src/feature-list.ts instead.
 */

import type { ActionGroup } from './registry.ts'
import type { Action } from './types.ts'

export interface ActionFamily<M = unknown> extends ActionGroup {
  /** The family's module, as its line imports it (builtins.ts reads the path from it). */
  module(): Promise<unknown>
  /** The family's actions, from its module. */
  pick(module: M): readonly Action[]
}

/** Types one line of the list: `pick` is checked against what `load` imports. */
function family<M>(f: {
  prefixes: readonly string[]
  dispatches?: boolean
  load: () => Promise<M>
  pick: (m: M) => readonly Action[]
}): ActionFamily<M> {
  return { ...f, module: f.load, load: async () => f.pick(await f.load()) }
}

export const BUILTIN_GROUPS: readonly ActionFamily<never>[] = [
  family({ prefixes: ['llm'], load: () => import('./llm/index.ts'), pick: (m) => m.llmActions }),
  family({ prefixes: ['json'], load: () => import('./json/index.ts'), pick: (m) => m.jsonActions }),
  family({ prefixes: ['memory'], load: () => import('./memory/index.ts'), pick: (m) => m.memoryActions }),
  family({ prefixes: ['ltm'], load: () => import('./ltm/index.ts'), pick: (m) => m.ltmActions }),
  family({ prefixes: ['vector', 'embedding'], load: () => import('./vector/index.ts'), pick: (m) => m.vectorActions }),
  family({ prefixes: ['text'], load: () => import('./text/index.ts'), pick: (m) => m.textActions }),
  family({ prefixes: ['http'], load: () => import('./http/index.ts'), pick: (m) => m.httpActions }),
  family({ prefixes: ['web'], load: () => import('./web/index.ts'), pick: (m) => m.webActions }),
  family({ prefixes: ['file'], load: () => import('./file/index.ts'), pick: (m) => m.fileActions }),
  family({ prefixes: ['aof'], load: () => import('./aof/index.ts'), pick: (m) => m.aofActions }),
  family({ prefixes: ['schema'], load: () => import('./schema/index.ts'), pick: (m) => m.schemaActions }),
  family({ prefixes: ['trace'], load: () => import('./trace/index.ts'), pick: (m) => m.traceActions }),
  family({ prefixes: ['agent'], load: () => import('./agent/index.ts'), pick: (m) => m.agentActions }),
  family({ prefixes: ['session'], load: () => import('./session/index.ts'), pick: (m) => m.sessionActions }),
  family({ prefixes: ['mqtt'], load: () => import('./mqtt/index.ts'), pick: (m) => m.mqttActions }),
  // These run or list other actions by name.
  family({
    prefixes: ['tools'],
    dispatches: true,
    load: () => import('./tools/index.ts'),
    pick: (m) => m.toolsActions,
  }),
  family({
    prefixes: ['ratelimit'],
    dispatches: true,
    load: () => import('./ratelimit/index.ts'),
    pick: (m) => m.ratelimitActions,
  }),
  family({
    prefixes: ['cache'],
    dispatches: true,
    load: () => import('./cache/index.ts'),
    pick: (m) => m.cacheActions,
  }),
  family({
    prefixes: ['flow'],
    dispatches: true,
    load: () => import('./flow/index.ts'),
    pick: (m) => m.flowActions,
  }),
  family({
    prefixes: ['retry'],
    dispatches: true,
    load: () => import('./retry/loop.ts'),
    pick: (m) => [m.retryLoop],
  }),
  family({
    prefixes: ['validate'],
    dispatches: true, // validate.extraction asks prolog.query
    load: () => import('./validate/extraction.ts'),
    pick: (m) => [m.validateExtraction, m.generatePrompt],
  }),
]
