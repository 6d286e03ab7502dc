/**
 * The module a `() => import('./x.ts')` loads, loaded now, for the registries built whole (src/features.ts,
 * src/actions/builtins.ts: the library's and the tests'). The lists write each module's path once, in the
 * `import()` esbuild needs written out (the CLI's registry loads it on first use); this reads the path back from
 * the function and requires it with `req`, the caller's own `require` (so the path resolves from the list's
 * folder). tea runs from source as CommonJS (tsx), where `require` loads the module `import()` would.
 */

import { TeaError } from './errors.ts'

export function requireImport(load: () => Promise<unknown>, req: NodeJS.Require | undefined): unknown {
  const path = /\bimport\(\s*["'`]([^"'`]+)["'`]/.exec(String(load))?.[1]
  if (req === undefined || path === undefined)
    throw new TeaError(
      'INTERNAL',
      'a registry built whole requires its modules: run src/ as CommonJS (tsx), or use lazyRegistry and load()',
    )
  return req(path)
}
