/**
 * How template values behave as text and as conditions.
 *
 * Text: strings as they are, numbers as JavaScript prints them, booleans `true`/`false`, `null` as the empty
 * string, lists and dicts as JSON. `undefined` has no text: the caller raises an error naming the expression
 * (StrictUndefined), because printing nothing would hide a typo in a prompt.
 */

import { RenderFault } from './faults.ts'

/** Longest string or list a template may build (`'ab' * n`, `replace`): keeps a typo from eating the board's RAM. */
export const MAX_BUILD = 10_000_000

export function checkLength(n: number): void {
  if (n > MAX_BUILD) throw new RenderFault(`result too large (${n} items; the limit is ${MAX_BUILD})`, -1)
}

/** Jinja truthiness: false for undefined, null, false, 0, NaN, '', an empty list and an empty dict. */
export function truthy(v: unknown): boolean {
  if (typeof v === 'boolean') return v
  if (v === undefined || v === null) return false
  if (typeof v === 'number') return v !== 0 && !Number.isNaN(v)
  if (typeof v === 'string') return v !== ''
  if (Array.isArray(v)) return v.length > 0
  if (typeof v === 'object' && isDict(v)) {
    for (const k in v) if (Object.hasOwn(v, k)) return true
    return false
  }
  return true
}

/** Text of a defined value; `undefined` is the caller's to report, and is refused here as a last resort. */
export function toText(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number') return String(v)
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (v === null) return ''
  if (v === undefined) throw new RenderFault('an undefined value cannot be printed', -1)
  return toJson(v, undefined)
}

export function toJson(v: unknown, indent: number | string | undefined): string {
  if (typeof v === 'function' || typeof v === 'symbol') throw new RenderFault(`a ${typeof v} cannot be rendered`, -1)
  let text: string | undefined
  try {
    text = JSON.stringify(v, null, indent)
  } catch (e) {
    throw new RenderFault(`value cannot be converted to JSON (${e instanceof Error ? e.message : String(e)})`, -1)
  }
  if (text === undefined) throw new RenderFault(`a ${typeName(v)} cannot be converted to JSON`, -1)
  return text
}

/** A plain object: what JSON and YAML produce. Class instances, Maps and the like are opaque to templates. */
export function isDict(v: object): v is Record<string, unknown> {
  // Any realm's Object.prototype counts: objects returned by `run:` code come from a vm context.
  const proto = Object.getPrototypeOf(v)
  return proto === null || (Object.getPrototypeOf(proto) === null && !Array.isArray(v))
}

/** The Jinja-ish name of a value's type, for messages. */
export function typeName(v: unknown): string {
  if (v === null) return 'none'
  if (Array.isArray(v)) return 'list'
  if (typeof v === 'object') return isDict(v) ? 'dict' : 'object'
  return typeof v
}

/** Structural equality as Python's `==`: lists and dicts by content; `null` and `undefined` equal each other. */
export function looseEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || a === undefined) return b === null || b === undefined
  if (typeof a !== 'object' || typeof b !== 'object' || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!looseEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b) || !isDict(a) || !isDict(b)) return false
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka) if (!Object.hasOwn(b, k) || !looseEqual(a[k], b[k])) return false
  return true
}
