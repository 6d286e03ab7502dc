// The optional features as the build sees them: src/feature-list.ts, the one list of them (docs/architecture.md).
// The build runs on plain Node, which does not load TypeScript, so the list is compiled with esbuild and evaluated
// on its own: its entries are data, and their `load` (an `import()` inside a function) is never called here.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runInNewContext } from 'node:vm'
import { transformSync } from 'esbuild'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Every feature of the list: `name` (its flag: `__FEATURE_<NAME>__`, and its key in a target's `features`) and `files`. */
export function readFeatureList(root = ROOT) {
  const { code } = transformSync(readFileSync(join(root, 'src', 'feature-list.ts'), 'utf8'), { loader: 'ts', format: 'cjs' })
  const module = { exports: {} }
  runInNewContext(code, { module, exports: module.exports, require: () => ({}) })
  // As plain data of this realm (the list was built in the vm's, whose arrays other code does not take for arrays).
  return JSON.parse(JSON.stringify(module.exports.FEATURES.map(({ name, files }) => ({ name, ...(files && { files }) }))))
}
