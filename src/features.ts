/**
 * The registry of the library, the pool's workers, `tea actions`, `tea doctor` and the tests: the core's built-ins
 * (and `extra`) there from the start, so that an agent using only those loads synchronously; the features' actions
 * (feature-list.ts) join on `load`, as in catalog.ts, which loading an agent does for the actions it names
 * (`await registry.load()` loads them all).
 */

import { builtinActions } from './actions/builtins.ts'
import { createLazyRegistry, type Registry } from './actions/registry.ts'
import type { Action } from './actions/types.ts'
import { lackingFeature, featureGroups } from './feature-list.ts'

/** The registry of this build: core built-ins, the enabled features' actions on `load`, and any `extra` (library use, tests). */
export function buildRegistry(extra: readonly Action[] = []): Registry {
  return createLazyRegistry(featureGroups(), [...builtinActions(), ...extra], lackingFeature)
}
