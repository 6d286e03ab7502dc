/** Collection databases in process memory (the memory store): keys kept as their JSON text, ranges sorted on demand. */

import type { Key } from '../kv.ts'
import type { CollectionDb, CollectionDbs, CollectionWriter } from './db.ts'

export function memoryCollectionDbs(): CollectionDbs {
  const dbs = new Map<string, CollectionDb>()
  return {
    open(name, create) {
      let db = dbs.get(name)
      if (!db && create) dbs.set(name, (db = memoryDb()))
      return db
    },
  }
}

function memoryDb(): CollectionDb {
  const entries = new Map<string, { key: Key; value: unknown }>()
  function* between(start: Key, end: Key) {
    const hits = [...entries.values()].filter((e) => compare(e.key, start) >= 0 && compare(e.key, end) < 0)
    yield* hits.sort((a, b) => compare(a.key, b.key))
  }
  return {
    get: (key) => structuredClone(entries.get(JSON.stringify(key))?.value),
    getBytes: (key) => entries.get(JSON.stringify(key))?.value as Uint8Array | undefined,
    *range(start, end) {
      for (const e of between(start, end)) yield { key: e.key, value: structuredClone(e.value) }
    },
    rangeBytes: (start, end) => between(start, end) as Iterable<{ key: Key; value: Uint8Array }>,
    write(writes) {
      // Reads inside the block see its own writes, as in an LMDB write transaction; a throw restores what was.
      const saved = new Map(entries)
      const w: CollectionWriter = {
        put: (key, record) => void entries.set(JSON.stringify(key), { key, value: structuredClone(record) }),
        putBytes: (key, bytes) => void entries.set(JSON.stringify(key), { key, value: bytes.slice() }),
        remove: (key) => void entries.delete(JSON.stringify(key)),
      }
      try {
        return writes(w)
      } catch (e) {
        entries.clear()
        for (const [k, v] of saved) entries.set(k, v)
        throw e
      }
    },
  }
}

/** lmdb's key order: arrays element by element, numbers before strings, a prefix before its extensions. */
function compare(a: Key, b: Key): number {
  const xs = Array.isArray(a) ? a : [a]
  const ys = Array.isArray(b) ? b : [b]
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
    const x = xs[i]!
    const y = ys[i]!
    if (x === y) continue
    if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1
    return x < y ? -1 : 1
  }
  return xs.length - ys.length
}
