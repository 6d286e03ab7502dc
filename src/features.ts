/**
 * The one place optional features join the core (SPEC §2). Each feature is guarded by a build flag that esbuild
 * replaces with a literal, so a target built with the flag off drops the branch and every module only it
 * imported. Nothing else in src/ may import planning/ or reasoning/.
 */

import type { Action } from './actions/types.ts'
import { planningActions } from './planning/index.ts'

export const FEATURES = ['planning', 'reasoning'] as const
export type Feature = (typeof FEATURES)[number]

export function enabledFeatures(): Feature[] {
  const on: Feature[] = []
  if (typeof __FEATURE_PLANNING__ === 'undefined' || __FEATURE_PLANNING__) on.push('planning')
  if (typeof __FEATURE_REASONING__ === 'undefined' || __FEATURE_REASONING__) on.push('reasoning')
  return on
}

/** Actions contributed by the features this build has. */
export function featureActions(): Action[] {
  const actions: Action[] = []
  if (typeof __FEATURE_PLANNING__ === 'undefined' || __FEATURE_PLANNING__) actions.push(...planningActions())
  return actions
}

/** Which feature provides an action namespace, so UNKNOWN_ACTION can say what the build lacks. */
export function featureForAction(name: string): Feature | undefined {
  if (name.startsWith('plan.')) return 'planning'
  if (name.startsWith('reason.')) return 'reasoning'
  return undefined
}
