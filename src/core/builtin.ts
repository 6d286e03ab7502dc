/**
 * A built-in module, loaded when first asked for instead of when the module that uses it loads. Every built-in
 * that Node's own start has not loaded costs a start time to compile: `node:module` and `node:os` together took
 * ~1.5 ms of a 3-node `tea run` from the executable (issue 14), though a run needs neither. So code on the path
 * of every start (the loader, the store, the pool) asks for such rare ones here, at the call that needs them.
 *
 * `process.getBuiltinModule` is Node 20.16+; a bundle on an older Node (the armv7 executable's 20.11) has the
 * CommonJS `require`, which loads built-ins everywhere.
 *
 * Node compiles a built-in from its own code cache, which V8 accepts only under the flags it was made with (V8
 * stamps a cache with a hash of its non-default flags). The executables hold V8's optimising compilers back
 * (scripts/build/sea-build.mjs, `SEA_V8_FLAGS`), and under those flags Node rejected that cache: `node:http` and the
 * streams under it took ~8 ms to load instead of ~2.4. So a built-in is loaded here with V8's flags at their start
 * values for the moment (`withNodeCache`), when the loader has left the means to (`V8_FLAGS`).
 */
interface Builtins {
  'node:os': typeof import('node:os')
  'node:module': typeof import('node:module')
  'node:http': typeof import('node:http')
  'node:https': typeof import('node:https')
  'node:zlib': typeof import('node:zlib')
  'node:v8': typeof import('node:v8')
  'node:sea': unknown
  'node:dns': typeof import('node:dns')
  'node:cluster': typeof import('node:cluster')
}

const loaded = new Map<keyof Builtins, unknown>()

/** The built-in `id`, loaded (with Node's cache, see above) at the first call; later calls only look it up. */
export function builtin<K extends keyof Builtins>(id: K): Builtins[K] {
  let mod = loaded.get(id)
  if (mod === undefined) {
    const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule
    mod = withNodeCache(() => (get ? get(id) : require(id)))
    loaded.set(id, mod)
  }
  return mod as Builtins[K]
}

/** Where the loader leaves the switch between V8's start flags and the executables' own (`V8FlagSwitch`). */
export const V8_FLAGS = Symbol.for('tea.v8Flags')

export interface V8FlagSwitch {
  set(flags: string): void
  /** The flags tea runs with, and what V8 had for the same flags when it started (which restores its flag hash). */
  readonly own: readonly string[]
  readonly start: readonly string[]
}

let held = 0

/**
 * Runs `load` (which loads built-ins, e.g. by reading a global such as `ReadableStream` that loads its module when
 * first read) with V8's start flags, so that Node's code cache of them applies. Calls may nest.
 */
export function withNodeCache<T>(load: () => T): T {
  const release = holdNodeCache()
  try {
    return load()
  } finally {
    release()
  }
}

/**
 * Switches V8 to its start flags until the function it returns is called (once; holds may nest): for loads that
 * outlive a call, such as a worker thread's own start, where Node loads ~110 of its modules before any of tea's
 * code runs in the thread. The flags are the process's, so they are set again on every hold: a worker's loader
 * sets the executables' own flags as it starts.
 */
export function holdNodeCache(): () => void {
  const flags = (globalThis as Record<symbol, V8FlagSwitch | undefined>)[V8_FLAGS]
  if (!flags) return () => {}
  held++
  for (const f of flags.start) flags.set(f)
  let released = false
  return () => {
    if (released) return
    released = true
    if (--held === 0) for (const f of flags.own) flags.set(f)
  }
}
