/**
 * The composition root of a process that loads actions on first use (`tea run`, `resume`, `validate`, `graph`,
 * `serve`, `worker`): the core's action groups plus those of the optional features this build has, each behind its
 * build flag as in features.ts, and imported only with `import()`, which esbuild keeps inside the one-file bundle as
 * a module that runs when first asked for. A `run:`-only agent thus never evaluates (nor, with the code cache,
 * deserialises) an action module; one that uses `json.transform` evaluates the json actions alone (bench/RESULTS.md,
 * issue 14). features.ts builds the same registry whole, for the library, the pool's workers, `tea actions` (which
 * lists every action) and `tea doctor`.
 */

import { BUILTIN_GROUPS } from './actions/catalog.ts'
import { type ActionGroup, createLazyRegistry, type Registry } from './actions/registry.ts'
import type { Action } from './actions/types.ts'

/** A registry of this build whose groups load on first use (Registry.load), with any `extra` actions. */
export function lazyRegistry(extra: readonly Action[] = []): Registry {
  return createLazyRegistry([...BUILTIN_GROUPS, ...featureGroups()], extra)
}

function featureGroups(): ActionGroup[] {
  const groups: ActionGroup[] = []
  // Plans and reasoning run other actions by name (an executor, tools).
  if (typeof __FEATURE_PLANNING__ === 'undefined' || __FEATURE_PLANNING__)
    groups.push({ prefixes: ['plan'], dispatches: true, load: async () => (await import('./planning/index.ts')).planningActions() })
  if (typeof __FEATURE_REASONING__ === 'undefined' || __FEATURE_REASONING__)
    groups.push({
      prefixes: ['reason', 'reflection'],
      dispatches: true,
      load: async () => (await import('./reasoning/index.ts')).reasoningActions(),
    })
  if (typeof __FEATURE_PROLOG__ === 'undefined' || __FEATURE_PROLOG__)
    groups.push({ prefixes: ['prolog'], load: async () => (await import('./prolog/index.ts')).prologActions() })
  if (typeof __FEATURE_LUA__ === 'undefined' || __FEATURE_LUA__)
    groups.push({ prefixes: ['lua'], load: async () => (await import('./lua/index.ts')).luaActions() })
  if (typeof __FEATURE_PYTHON__ === 'undefined' || __FEATURE_PYTHON__)
    groups.push({ prefixes: ['python'], load: async () => (await import('./python/index.ts')).pythonActions() })
  return groups
}
