/**
 * Which release targets have each feature, read from targets/*.json when tea runs from source (src/feature-list.ts
 * targetsWith; a bundle has the table the build wrote into it). Apart from the list, whose module must hold no
 * import that keeps esbuild from folding its build-only parts away.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

export function sourceTargets(features: readonly { name: string }[]): Record<string, string[]> {
  // From source only (tests, tsx): this file's own path, by `__filename` under tsx's require hook, else its stack
  // frame (`import.meta` would make esbuild warn in every CJS build; see src/pool/worker-location.ts).
  const here =
    typeof __filename === 'string' && __filename !== ''
      ? __filename
      : /(\/[^\s():]*\/feature-targets\.ts)/.exec(new Error().stack ?? '')?.[1]
  if (here === undefined) return {}
  const dir = join(dirname(here), '..', 'targets')
  const targets = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({
      name: f.slice(0, -5),
      features: (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { features: Record<string, boolean> }).features,
    }))
  return Object.fromEntries(features.map((f) => [f.name, targets.filter((t) => t.features[f.name]).map((t) => t.name)]))
}
