/**
 * The core's actions at once (SPEC §3.4), for a registry built whole (src/features.ts: the library and the tests):
 * the families of catalog.ts, each module required as it is listed there. Nothing the CLI bundles imports this: the
 * CLI's registry loads a family with its `import()` on first use (src/catalog.ts).
 */

import { TeaError } from '../core/errors.ts'
import { BUILTIN_GROUPS } from './catalog.ts'
import type { Action } from './types.ts'

export function builtinActions(): Action[] {
  // tea runs from source as CommonJS (tsx), where `require` loads the same module `import()` would.
  if (typeof require !== 'function')
    throw new TeaError('INTERNAL', 'builtinActions loads the actions with require: run src/ as CommonJS, or use lazyRegistry and load()')
  return BUILTIN_GROUPS.flatMap((f) => [...f.pick(require(f.entry) as never)])
}
