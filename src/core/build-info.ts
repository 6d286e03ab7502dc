/**
 * What this build is: version, target and features, from the build-time defines (build.mjs). The core knows no
 * feature by name: the list is src/feature-list.ts, from which build.mjs derives `__TEA_FEATURES__`; from source
 * (no defines) the caller that knows the list passes the features (`tea --version`: enabledFeatures()).
 */

/** The features this build has, as the build named them; none from source unless `features` says. */
function builtFeatures(): readonly string[] {
  return typeof __TEA_FEATURES__ === 'undefined' ? [] : __TEA_FEATURES__
}

/** What `tea --version` prints (without the newline); the bundle's loader prints it too, before loading the rest. */
export function versionLine(features: readonly string[] = builtFeatures()): string {
  const v = buildInfo(features)
  return `tea ${v.version} (${v.target}; features: ${v.features.join(', ') || 'none'}; node ${v.node})`
}

export function buildInfo(features: readonly string[] = builtFeatures()): {
  version: string
  target: string
  features: string[]
  node: string
} {
  return {
    version: typeof __TEA_VERSION__ === 'undefined' ? 'dev' : __TEA_VERSION__,
    target: typeof __TEA_TARGET__ === 'undefined' ? 'source' : __TEA_TARGET__,
    features: [...features],
    node: process.version,
  }
}

/**
 * Where the bundle's loader puts its hash of the program it runs (src/sea/loader.ts): the first 16 hex digits of
 * the program's SHA-256 (scripts/build/bundle.mjs).
 */
export const PROGRAM_ID = Symbol.for('tea.program')

/** The build of the program running, as the loader names it: what is kept per build is kept under it. Undefined from source. */
export function programId(): string | undefined {
  const id = (globalThis as Record<symbol, unknown>)[PROGRAM_ID]
  return typeof id === 'string' ? id : undefined
}

/** Whether `name` has the form of a program id (what the caches name a build's entries by). */
export function isProgramId(name: string): boolean {
  return /^[0-9a-f]{16}$/.test(name)
}
