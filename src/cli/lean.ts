/**
 * Peak memory while loading an agent file. Parsing YAML with positions makes the parser's loops hot, and V8's
 * optimising compiler then takes ~9 MB of compile memory for code that runs once per process — the largest share
 * of tea's peak RSS on a 200-node agent (bench/RESULTS.md). Loading with the optimiser capped at the baseline tier
 * avoids that; the cap is lifted as soon as loading ends, so the run itself is optimised as usual. Boards with
 * 512 MB of RAM are the target, and a load costs milliseconds either way.
 *
 * Only where V8 can lift the cap: V8 11 (Node 20) does not undo what `--max-opt=1` implied when the flag is set
 * back, so optimisation stayed off for the rest of the process (a hot loop in `run:` code ran 12× slower after a
 * load; issue 14) and the flags V8 reports changed, which also voids the bundle's code cache (src/sea/loader.ts).
 * V8 13 (Node 24, the executables' Node) restores both.
 */

import { statSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'

/**
 * Below this size a load never runs hot enough for the optimiser (a 3-node agent is ~300 B), and changing V8's
 * flags would only cost the start node:v8 (~0.7 ms).
 */
const LEAN_FROM_BYTES = 4096

/** Runs `load` (which reads and compiles the agent `file`) with the optimiser capped when that saves memory. */
export function leanLoad<T>(file: string, load: () => T): T {
  if (Number(process.versions.v8.split('.')[0]) < 13 || fileSize(file) < LEAN_FROM_BYTES) return load()
  setFlagsFromString('--max-opt=1')
  try {
    return load()
  } finally {
    setFlagsFromString('--max-opt=999') // V8's default: every tier
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size
  } catch {
    return 0 // the load reports it
  }
}
