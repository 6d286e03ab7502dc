/**
 * The core's actions, one family a line: the one list of them. A family is the actions whose names start with one of
 * its `prefixes` and a dot, in its module `entry`, which `pick` takes them from.
 *
 * A NEW ACTION FAMILY IS ONE LINE HERE (nothing else lists the core's actions): `load` must be the `import()` of
 * `entry` written out, so that esbuild keeps the module inside the bundle, to be run when first asked for (src/catalog.ts:
 * `tea run` evaluates only the families its agent names); `entry` is the same path for the registry built whole
 * (builtins.ts, which requires it). A family whose actions run or list other actions by name says `dispatches`.
 * Optional features add theirs in src/feature-list.ts instead.
 */

import type { ActionGroup } from './registry.ts'
import type { Action } from './types.ts'

export interface ActionFamily<M = unknown> extends ActionGroup {
  /** The module `load` imports, relative to this folder. */
  entry: string
  /** The family's actions, from its module. */
  pick(module: M): readonly Action[]
}

/** Types one line of the list: `pick` is checked against what `load` imports. */
function family<M>(f: {
  prefixes: readonly string[]
  dispatches?: boolean
  entry: string
  load: () => Promise<M>
  pick: (m: M) => readonly Action[]
}): ActionFamily<M> {
  return { ...f, load: async () => f.pick(await f.load()) }
}

export const BUILTIN_GROUPS: readonly ActionFamily<never>[] = [
  family({ prefixes: ['llm'], entry: './llm/index.ts', load: () => import('./llm/index.ts'), pick: (m) => m.llmActions }),
  family({ prefixes: ['json'], entry: './json/index.ts', load: () => import('./json/index.ts'), pick: (m) => m.jsonActions }),
  family({ prefixes: ['memory'], entry: './memory/index.ts', load: () => import('./memory/index.ts'), pick: (m) => m.memoryActions }),
  family({ prefixes: ['ltm'], entry: './ltm/index.ts', load: () => import('./ltm/index.ts'), pick: (m) => m.ltmActions }),
  family({ prefixes: ['http'], entry: './http/index.ts', load: () => import('./http/index.ts'), pick: (m) => m.httpActions }),
  family({ prefixes: ['web'], entry: './web/index.ts', load: () => import('./web/index.ts'), pick: (m) => m.webActions }),
  family({ prefixes: ['file'], entry: './file/index.ts', load: () => import('./file/index.ts'), pick: (m) => m.fileActions }),
  family({ prefixes: ['aof'], entry: './aof/index.ts', load: () => import('./aof/index.ts'), pick: (m) => m.aofActions }),
  family({ prefixes: ['schema'], entry: './schema/index.ts', load: () => import('./schema/index.ts'), pick: (m) => m.schemaActions }),
  family({ prefixes: ['trace'], entry: './trace/index.ts', load: () => import('./trace/index.ts'), pick: (m) => m.traceActions }),
  family({ prefixes: ['agent'], entry: './agent/index.ts', load: () => import('./agent/index.ts'), pick: (m) => m.agentActions }),
  family({ prefixes: ['session'], entry: './session/index.ts', load: () => import('./session/index.ts'), pick: (m) => m.sessionActions }),
  // These run or list other actions by name.
  family({
    prefixes: ['code'],
    dispatches: true,
    entry: './code/index.ts',
    load: () => import('./code/index.ts'),
    pick: (m) => m.codeActions,
  }),
  family({
    prefixes: ['tools'],
    dispatches: true,
    entry: './tools/index.ts',
    load: () => import('./tools/index.ts'),
    pick: (m) => m.toolsActions,
  }),
  family({
    prefixes: ['ratelimit'],
    dispatches: true,
    entry: './ratelimit/index.ts',
    load: () => import('./ratelimit/index.ts'),
    pick: (m) => m.ratelimitActions,
  }),
  family({
    prefixes: ['flow'],
    dispatches: true,
    entry: './flow/index.ts',
    load: () => import('./flow/index.ts'),
    pick: (m) => m.flowActions,
  }),
  family({
    prefixes: ['retry'],
    dispatches: true,
    entry: './retry/loop.ts',
    load: () => import('./retry/loop.ts'),
    pick: (m) => [m.retryLoop],
  }),
  family({
    prefixes: ['validate'],
    dispatches: true, // validate.extraction asks prolog.query
    entry: './validate/extraction.ts',
    load: () => import('./validate/extraction.ts'),
    pick: (m) => [m.validateExtraction, m.generatePrompt],
  }),
]
