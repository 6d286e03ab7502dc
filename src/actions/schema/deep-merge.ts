/**
 * TEA's deep merge of JSON schemas (schema.merge), as its `schema/deep_merge.py` defines it: mappings merge key by
 * key, later values win, `null` overrides, and lists are replaced — except the lists an agent file has, which TEA
 * merges by their identifying key (`nodes` by `name`, `edges` by `from`+`to`, a node's `goto` by `to`), an element
 * with `__delete__: true` removing its match. The inputs are never changed.
 */

type Json = unknown

const LIST_KEYS: Readonly<Record<string, readonly string[]>> = { nodes: ['name'], edges: ['from', 'to'], goto: ['to'] }
const DELETE = '__delete__'

const clone = (x: Json): Json => (x === undefined ? x : structuredClone(x as object))
const isMapping = (x: unknown): x is Record<string, Json> => typeof x === 'object' && x !== null && !Array.isArray(x)

/** `schemas` merged in order, the first lowest; null entries are skipped, as TEA's merge_all skips them. */
export function mergeAll(schemas: readonly Json[]): Json {
  const present = schemas.filter((s) => s !== null && s !== undefined)
  if (present.length === 0) return {}
  let result = clone(present[0])
  for (const s of present.slice(1)) result = merge(result, s, '')
  return result === null || result === undefined ? {} : result
}

/** Deeper than any schema; a deeper one (hostile input) is refused rather than walked to a stack overflow. */
const MAX_DEPTH = 128

/** `overlay` over `base`; `key` is the name the value sits under (which says how a list merges). */
export function merge(base: Json, overlay: Json, key: string, depth = 0): Json {
  if (depth > MAX_DEPTH) throw new Error(`the schemas nest deeper than ${MAX_DEPTH} levels`)
  if (overlay === null) return null
  if (base === null || base === undefined) return clone(overlay)
  if (Array.isArray(base) && Array.isArray(overlay)) {
    const keys = LIST_KEYS[key]
    return keys ? mergeByKey(base, overlay, keys, depth) : clone(overlay)
  }
  if (!isMapping(base) || !isMapping(overlay)) return clone(overlay)
  const result: Record<string, Json> = { ...base }
  for (const [k, v] of Object.entries(overlay)) {
    if (k === DELETE) continue
    // Defined, not assigned: a key `__proto__` (JSON.parse and YAML make it an own key) must stay a key.
    const value = Object.hasOwn(result, k) ? merge(result[k], v, k, depth + 1) : clone(v)
    Object.defineProperty(result, k, { value, enumerable: true, writable: true, configurable: true })
  }
  return result
}

function identity(element: Json, keys: readonly string[]): string | undefined {
  if (!isMapping(element) || !keys.every((k) => Object.hasOwn(element, k))) return undefined
  return JSON.stringify(keys.map((k) => element[k]))
}

function mergeByKey(base: readonly Json[], overlay: readonly Json[], keys: readonly string[], depth: number): Json[] {
  const result: Json[] = base.map((e) => clone(e))
  const at = new Map<string, number>()
  base.forEach((e, i) => {
    const id = identity(e, keys)
    if (id !== undefined) at.set(id, i)
  })
  const removed = new Set<number>()
  for (const e of overlay) {
    const id = identity(e, keys)
    if (isMapping(e) && e[DELETE]) {
      if (id !== undefined && at.has(id)) removed.add(at.get(id)!)
      continue
    }
    const i = id === undefined ? undefined : at.get(id)
    if (i !== undefined) result[i] = merge(result[i], e, '', depth + 1)
    else {
      result.push(clone(e))
      if (id !== undefined) at.set(id, result.length - 1)
    }
  }
  return result.filter((_, i) => !removed.has(i))
}
