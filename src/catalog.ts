/**
 * The registry of a process that loads actions on first use (`tea run`, `resume`, `validate`, `graph`, `serve`,
 * `worker`): the core's action groups (actions/catalog.ts) and those of the features this build has
 * (feature-list.ts), each behind `import()`, which esbuild keeps inside the one-file bundle as a module that runs
 * when first asked for. A `run:`-only agent thus never evaluates (nor, with the code cache, deserialises) an action
 * module; one that uses `json.transform` evaluates the json actions alone (bench/RESULTS.md, issue 14). features.ts
 * builds the same registry with the core's actions there from the start.
 */

import { BUILTIN_GROUPS } from './actions/catalog.ts'
import { createLazyRegistry, type Registry } from './actions/registry.ts'
import type { Action } from './actions/types.ts'
import { FEATURE_FACTS, featureGroups } from './feature-list.ts'

/** A registry of this build whose groups load on first use (Registry.load), with any `extra` actions. */
export function lazyRegistry(extra: readonly Action[] = []): Registry {
  return createLazyRegistry([...BUILTIN_GROUPS, ...featureGroups()], extra, FEATURE_FACTS)
}
