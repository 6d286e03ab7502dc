/**
 * The `memory` database: `[namespace, key]` → `{value, expiresAt?}`. An expired entry reads as absent and is
 * deleted when met.
 */

import { TeaError } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'
import { MAX_STRING, type Kv } from './kv.ts'
import type { Store } from './types.ts'

type MemoryTable = Pick<Store, 'memoryPut' | 'memoryGet' | 'memoryDelete' | 'memoryList'>

export function createMemoryTable(kv: Kv, now: () => number): MemoryTable {
  /** The live entry at a key, or undefined when absent or expired. */
  function live(namespace: string, key: string, bytes: Uint8Array | undefined): { value: unknown } | undefined {
    if (!bytes) return undefined
    let entry: unknown
    try {
      entry = kv.decode(bytes)
    } catch (e) {
      entry = e
    }
    if (!isPlainObject(entry) || !('value' in entry)) {
      throw new TeaError('STORE_ERROR', `memory entry ${JSON.stringify(key)} in namespace ${JSON.stringify(namespace)} is corrupt`, {
        hint: 'delete it with memory.delete',
      })
    }
    if (typeof entry.expiresAt === 'number' && entry.expiresAt <= now()) {
      void kv.remove([namespace, key]).catch(() => {})
      return undefined
    }
    return { value: entry.value }
  }

  return {
    async memoryPut(namespace, key, value, ttlMs) {
      const entry = ttlMs === undefined ? { value } : { value, expiresAt: now() + ttlMs }
      await kv.put([namespace, key], kv.encode(entry))
    },
    async memoryGet(namespace, key) {
      const entry = live(namespace, key, kv.get([namespace, key]))
      return entry ? { found: true, value: entry.value } : { found: false }
    },
    async memoryDelete(namespace, key) {
      const existed = live(namespace, key, kv.get([namespace, key])) !== undefined
      await kv.remove([namespace, key])
      return existed
    },
    async memoryList(namespace, prefix = '') {
      const keys: string[] = []
      for (const { key, value } of kv.range([namespace, prefix], [namespace, prefix + MAX_STRING])) {
        const k = (key as string[])[1]!
        if (k.startsWith(prefix) && live(namespace, k, value)) keys.push(k)
      }
      return keys
    },
  }
}
