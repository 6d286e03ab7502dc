/**
 * Peak memory while loading an agent file. Parsing YAML with positions makes the parser's loops hot, and V8's
 * optimising compilers then take megabytes of compile memory (and map megabytes more of their own machine code)
 * for code that runs once per process — the largest share of tea's peak RSS on a 200-node agent (bench/RESULTS.md).
 * Loading with Maglev and TurboFan off avoids that; they are turned back on as soon as loading ends, so the run
 * itself is optimised as usual. Boards with 512 MB of RAM are the target, and a load costs milliseconds either way.
 *
 * Which flags: V8 13 (Node 24, the executables' Node) reads `--max-opt` only when it starts (setting it later
 * changes nothing: a 200-node load still compiled the parser's scalar test with Maglev), but honours `--no-maglev`
 * and `--no-turbofan` at any time, and setting them back restores V8's flag hash, which the bundle's code cache is
 * stamped with (src/sea/loader.ts). A tier that was already off (Maglev where V8 lacks it) is left off: whether a
 * flag changed is read from that same hash. V8 11 (Node 20) does not undo such a change cleanly (a hot loop in
 * `run:` code ran 12× slower after a load), so there the load runs as it is.
 */

import { statSync } from 'node:fs'
import { join } from 'node:path'
import { cachedDataVersionTag, setFlagsFromString } from 'node:v8'
import type { Loading } from '../agent/load.ts'
import { programId } from '../core/build-info.ts'
import { cacheDir } from '../sea/cache-dir.ts'

/**
 * Below this size a load never runs hot enough for the optimiser (a 3-node agent is ~300 B), and changing V8's
 * flags would only cost the start node:v8 (~0.7 ms).
 */
const LEAN_FROM_BYTES = 4096

/** The optimising tiers, as V8 13 names their switches. */
const TIERS = ['maglev', 'turbofan'] as const

/**
 * How the CLI loads the agent `file`: lean (below), and with its YAML parse kept in the cache dir for the next start
 * (src/agent/parse-cache.ts), in a folder per build of the program; a run from source keeps none.
 */
export function cliLoading(file: string): Loading {
  const program = programId()
  return { around: (load) => leanLoad(file, load), ...(program !== undefined && { parseCache: join(cacheDir(), 'agents', program) }) }
}

/** Runs `load` (which reads and compiles the agent `file`) with the optimisers off when that saves memory. */
export function leanLoad<T>(file: string, load: () => T): T {
  if (Number(process.versions.v8.split('.')[0]) < 13 || fileSize(file) < LEAN_FROM_BYTES) return load()
  const turnedOff = TIERS.filter((tier) => {
    const before = cachedDataVersionTag()
    setFlagsFromString(`--no-${tier}`)
    return cachedDataVersionTag() !== before
  })
  try {
    return load()
  } finally {
    for (const tier of turnedOff) setFlagsFromString(`--${tier}`)
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size
  } catch {
    return 0 // the load reports it
  }
}
