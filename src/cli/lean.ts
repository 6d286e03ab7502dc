/**
 * Peak memory while loading an agent file. Parsing YAML with positions makes the parser's loops hot, and V8's
 * optimising compiler then takes ~9 MB of compile memory for code that runs once per process — the largest share
 * of tea's peak RSS on a 200-node agent (bench/RESULTS.md). Loading with the optimiser capped at the baseline tier
 * avoids that; the cap is lifted as soon as loading ends, so the run itself is optimised as usual. Boards with
 * 512 MB of RAM are the target, and a load costs milliseconds either way.
 */

import { setFlagsFromString } from 'node:v8'

export function leanLoad<T>(load: () => T): T {
  setFlagsFromString('--max-opt=1')
  try {
    return load()
  } finally {
    setFlagsFromString('--max-opt=999') // V8's default: every tier
  }
}
