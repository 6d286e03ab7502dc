// Target files (targets/<name>.json): which Node runs the executable, its arch, the value of every feature flag,
// and which lmdb prebuild package carries the native addon for that arch.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { readFeatureList } from './features.mjs'

/** The feature flags, one per feature of src/feature-list.ts. */
export const FLAGS = readFeatureList().map((f) => f.name)

const ARCHES = ['x64', 'arm64', 'arm']

export function listTargets(root) {
  return readdirSync(join(root, 'targets'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort()
}

export function loadTarget(root, name) {
  const known = listTargets(root)
  if (!known.includes(name)) throw new Error(`unknown target '${name}' (known: ${known.join(', ')})`)
  const file = join(root, 'targets', `${name}.json`)
  let target
  try {
    target = JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    throw new Error(`target ${name}: cannot read ${file} (${e.message})`)
  }
  const features = target.features ?? {}
  const missing = FLAGS.filter((f) => typeof features[f] !== 'boolean')
  const unknown = Object.keys(features).filter((f) => !FLAGS.includes(f))
  if (missing.length) throw new Error(`target ${name}: feature flag(s) not set: ${missing.join(', ')} (each must be true or false)`)
  if (unknown.length) throw new Error(`target ${name}: unknown feature flag(s): ${unknown.join(', ')} (known: ${FLAGS.join(', ')})`)
  if (!ARCHES.includes(target.arch)) throw new Error(`target ${name}: arch '${target.arch}' is not one of ${ARCHES.join(', ')}`)
  if (!/^\d+\.\d+\.\d+$/.test(target.node ?? ''))
    throw new Error(`target ${name}: node must be an exact version like 24.21.0, got ${JSON.stringify(target.node)}`)
  if (typeof target.lmdbPrebuild !== 'string')
    throw new Error(`target ${name}: lmdbPrebuild (the @lmdb/lmdb-<platform>-<arch> package) is missing`)
  return { ...target, name }
}

/** Which targets have each feature: `{ python: ['linux-arm64', 'linux-x64'], … }` (an error names the builds to use). */
export function featureTargets(root) {
  const targets = listTargets(root).map((t) => loadTarget(root, t))
  return Object.fromEntries(FLAGS.map((f) => [f, targets.filter((t) => t.features[f]).map((t) => t.name)]))
}

/** Node 20.12 added `node:sea` and SEA assets; older Nodes get the addon as bytes inside the bundle. */
export function hasSeaAssets(target) {
  const [major, minor] = target.node.split('.').map(Number)
  return major > 20 || (major === 20 && minor >= 12)
}
