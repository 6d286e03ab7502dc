/**
 * The one place optional features join the core (SPEC §2). Each feature is guarded by a build flag that esbuild
 * replaces with a literal, so a target built with the flag off drops the branch and every module only it
 * imported. Nothing else in src/ may import planning/ or reasoning/.
 */

import type { Action } from './actions/types.ts'
import { planningActions } from './planning/index.ts'

/** Actions contributed by the features this build has. */
export function featureActions(): Action[] {
  const actions: Action[] = []
  if (typeof __FEATURE_PLANNING__ === 'undefined' || __FEATURE_PLANNING__) actions.push(...planningActions())
  return actions
}
