/**
 * The registry of the library (src/index.ts) and of the tests: every action of this build there from the start, so
 * that an agent loads synchronously (loadAgentText, requireAgent). It requires each feature's entry
 * (feature-list.ts; core/require-import.ts) when first built, which is why nothing the CLI bundles imports it: the CLI, the pool's workers,
 * `tea actions` and `tea doctor` build catalog.ts's registry, which loads an action's group with `import()` on first
 * use, so that a disabled feature's modules leave the bundle and a run evaluates only what its agent names.
 */

import { builtinActions } from './actions/builtins.ts'
import { createRegistry, type Registry } from './actions/registry.ts'
import type { Action } from './actions/types.ts'
import { requireImport } from './core/require-import.ts'
import { FEATURES, type FeatureCode, FEATURE_FACTS } from './feature-list.ts'

/** The registry of this build: core built-ins, the enabled features' actions, and any `extra` (library use, tests). */
export function buildRegistry(extra: readonly Action[] = []): Registry {
  return createRegistry([...builtinActions(), ...featureActions(), ...extra], FEATURE_FACTS)
}

let loaded: readonly Action[] | undefined

/** The actions of the enabled features (the fleet has none: its NATS client stays unloaded until a store opens). */
function featureActions(): readonly Action[] {
  const req = typeof require === 'function' ? require : undefined
  loaded ??= FEATURES.flatMap(({ actions, load }) => (actions && load ? ((requireImport(load, req) as FeatureCode).actions?.() ?? []) : []))
  return loaded
}
