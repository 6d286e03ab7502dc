/**
 * The core's actions at once (SPEC §3.4), for a registry built whole (src/features.ts: the library and the tests):
 * the families of catalog.ts, each module required as its line imports it (core/require-import.ts). Nothing the
 * CLI bundles imports this: the CLI's registry loads a family with its `import()` on first use (src/catalog.ts).
 */

import { requireImport } from '../core/require-import.ts'
import { BUILTIN_GROUPS } from './catalog.ts'
import type { Action } from './types.ts'

export function builtinActions(): Action[] {
  const req = typeof require === 'function' ? require : undefined
  return BUILTIN_GROUPS.flatMap((f) => [...f.pick(requireImport(f.module, req) as never)])
}
