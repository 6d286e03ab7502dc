import { featureActions } from '../features.ts'
import { builtinActions } from './builtins.ts'
import { createRegistry, type Registry } from './registry.ts'

/** The registry of this build: core built-ins plus the enabled features' actions. */
export function buildRegistry(): Registry {
  return createRegistry([...builtinActions(), ...featureActions()])
}
