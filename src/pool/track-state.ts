/**
 * Which top-level keys of `state` a piece of `run:` code changed. A Proxy sees assignments and deletions of
 * top-level keys directly; for nested mutation (`state.items.push(x)`) it remembers the JSON of every object-valued
 * key at its first read and compares afterwards, so the cost is paid only for keys the code touched.
 */

export interface StateTracker {
  proxy: Record<string, unknown>
  changes(): { updates: Record<string, unknown>; removed: string[] }
}

export function trackTopLevel(state: Record<string, unknown>): StateTracker {
  const written = new Set<string>()
  const removed = new Set<string>()
  const readJson = new Map<string, string>()
  const proxy = new Proxy(state, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (typeof key === 'string' && typeof value === 'object' && value !== null && !readJson.has(key) && !written.has(key))
        readJson.set(key, JSON.stringify(value))
      return value
    },
    set(target, key, value, receiver) {
      if (typeof key === 'string') {
        written.add(key)
        removed.delete(key)
      }
      return Reflect.set(target, key, value, receiver)
    },
    deleteProperty(target, key) {
      if (typeof key === 'string') {
        removed.add(key)
        written.delete(key)
      }
      return Reflect.deleteProperty(target, key)
    },
  })
  return {
    proxy,
    changes() {
      const updates: Record<string, unknown> = {}
      for (const key of written) updates[key] = state[key]
      for (const [key, before] of readJson)
        if (!written.has(key) && !removed.has(key) && JSON.stringify(state[key]) !== before) updates[key] = state[key]
      return { updates, removed: [...removed] }
    },
  }
}
