/**
 * What this build is: version, target and features, from the build-time defines (build.mjs). Kept apart from
 * src/features.ts so that asking for them (`tea --version`, error hints) loads no feature code. The feature list
 * comes from `__TEA_FEATURES__`, which build.mjs derives from the same target file as the `__FEATURE_*__` flags
 * src/features.ts branches on (there the literal must stand in the `if` itself: esbuild drops a disabled feature's
 * modules only when the branch is dead where it is written, not through a constant imported from elsewhere). From
 * source (no defines) every feature is on.
 */

export const FEATURES = ['planning', 'reasoning', 'prolog', 'lua', 'python'] as const
export type Feature = (typeof FEATURES)[number]

/** The features this build has (`tea --version` lists them). */
export function enabledFeatures(): Feature[] {
  const on: readonly string[] = typeof __TEA_FEATURES__ === 'undefined' ? FEATURES : __TEA_FEATURES__
  return FEATURES.filter((f) => on.includes(f))
}

/** Which feature provides an action namespace, so UNKNOWN_ACTION can say what the build lacks. */
export function featureForAction(name: string): Feature | undefined {
  if (name.startsWith('plan.')) return 'planning'
  if (name.startsWith('reason.') || name === 'reflection.loop') return 'reasoning'
  if (name.startsWith('prolog.')) return 'prolog'
  if (name.startsWith('lua.')) return 'lua'
  if (name.startsWith('python.')) return 'python'
  return undefined
}

/** What `tea --version` prints (without the newline); the bundle's loader prints it too, before loading the rest. */
export function versionLine(): string {
  const v = buildInfo()
  return `tea ${v.version} (${v.target}; features: ${v.features.join(', ') || 'none'}; node ${v.node})`
}

export function buildInfo(): { version: string; target: string; features: Feature[]; node: string } {
  return {
    version: typeof __TEA_VERSION__ === 'undefined' ? 'dev' : __TEA_VERSION__,
    target: typeof __TEA_TARGET__ === 'undefined' ? 'source' : __TEA_TARGET__,
    features: enabledFeatures(),
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
