/**
 * What this build is: version, target and features, from the build-time defines (build.mjs). Kept apart from
 * src/features.ts so that asking for them (`tea --version`, error hints) loads no feature code.
 */

export const FEATURES = ['planning', 'reasoning'] as const
export type Feature = (typeof FEATURES)[number]

/**
 * The features this build has code for. `reasoning` has its build flag (targets name it, so the flag exists from
 * day one) but no actions yet, so it is never listed: `tea --version` says what the build can do.
 */
export function enabledFeatures(): Feature[] {
  const on: Feature[] = []
  if (typeof __FEATURE_PLANNING__ === 'undefined' || __FEATURE_PLANNING__) on.push('planning')
  return on
}

/** Which feature provides an action namespace, so UNKNOWN_ACTION can say what the build lacks. */
export function featureForAction(name: string): Feature | undefined {
  if (name.startsWith('plan.')) return 'planning'
  if (name.startsWith('reason.')) return 'reasoning'
  return undefined
}

export function buildInfo(): { version: string; target: string; features: Feature[]; node: string } {
  return {
    version: typeof __TEA_VERSION__ === 'undefined' ? 'dev' : __TEA_VERSION__,
    target: typeof __TEA_TARGET__ === 'undefined' ? 'source' : __TEA_TARGET__,
    features: enabledFeatures(),
    node: process.version,
  }
}
