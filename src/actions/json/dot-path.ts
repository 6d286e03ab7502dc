/**
 * Dot-paths for `json.transform`'s `pick`/`omit`: `user.name`, `items.0.id` or `items[0].id`. Segments that could
 * reach an object's prototype are refused rather than followed.
 */

import { TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype'])

export function splitPath(path: string): string[] {
  const parts = path.replace(/\[(\d+)\]/g, '.$1').split('.')
  if (parts.some((p) => p === '')) {
    throw new TeaError('INVALID_PARAMS', `json.transform: expected a dot-path such as 'user.name', got '${path}'`)
  }
  const bad = parts.find((p) => FORBIDDEN.has(p))
  if (bad) throw new TeaError('INVALID_PARAMS', `json.transform: path '${path}' uses the forbidden segment '${bad}'`)
  return parts
}

function child(container: unknown, key: string): { found: boolean; value?: unknown } {
  if (Array.isArray(container)) {
    const i = /^\d+$/.test(key) ? Number(key) : -1
    return i >= 0 && i < container.length ? { found: true, value: container[i] } : { found: false }
  }
  if (isPlainObject(container) && Object.hasOwn(container, key)) return { found: true, value: container[key] }
  return { found: false }
}

/** Copies the value at `parts` from `source` into `target` at the same path; a missing path copies nothing. */
export function copyPath(source: unknown, target: Record<string, unknown>, parts: string[]): void {
  let from: unknown = source
  for (const key of parts) {
    const c = child(from, key)
    if (!c.found) return
    from = c.value
  }
  let to = target
  for (const key of parts.slice(0, -1)) {
    if (!isPlainObject(to[key])) to[key] = {}
    to = to[key] as Record<string, unknown>
  }
  to[parts[parts.length - 1]!] = structuredClone(from)
}

/** Removes the value at `parts` from `target` (already a copy); a missing path removes nothing. */
export function deletePath(target: unknown, parts: string[]): void {
  let at: unknown = target
  for (const key of parts.slice(0, -1)) {
    const c = child(at, key)
    if (!c.found) return
    at = c.value
  }
  const last = parts[parts.length - 1]!
  if (!child(at, last).found) return
  if (Array.isArray(at)) at.splice(Number(last), 1)
  else delete (at as Record<string, unknown>)[last]
}
