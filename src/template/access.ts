/**
 * The sandbox boundary. A template can read only data: own enumerable properties of plain objects, elements and
 * `length` of arrays and strings. It can never obtain a function (so it can never call one), a prototype or a
 * constructor, and objects that are not plain data (class instances, Maps, Dates) are opaque. Static names such as
 * `x.constructor` are refused at compile time (`checkKey`); this module guards dynamic keys (`x[k]`) and values.
 *
 * Reads are plain property loads (the hot path): on a plain object everything inherited is a function (bar the
 * blocked `__proto__`), so a non-function result is own data, and a function result is refused or treated as
 * missing. Getters on plain objects are not detected (that would cost a descriptor lookup per read); scope
 * values come from the runtime, not from the template author, and JSON/YAML never produce accessors.
 */

import { RenderFault } from './faults.ts'
import { isDict, typeName } from './values.ts'

const isEnumerable = Object.prototype.propertyIsEnumerable

/** Keys that lead to an object's prototype machinery; refused wherever they appear. */
export const BLOCKED_KEYS: ReadonlySet<string> = /* @__PURE__ */ new Set(['__proto__', 'constructor', 'prototype'])

/** `obj[key]` for a defined, non-null `obj`; `undefined` when the key is missing. */
export function readKey(obj: unknown, key: unknown, at: number): unknown {
  if (typeof key === 'string') {
    if (BLOCKED_KEYS.has(key)) throw new RenderFault(`access to '${key}' is not allowed in templates`, at)
  } else if (typeof key !== 'number') {
    throw new RenderFault(`cannot use a ${typeName(key)} as a key or index`, at)
  }
  if (typeof obj === 'object' && obj !== null) {
    if (Array.isArray(obj)) return readIndexed(obj, key)
    if (!isDict(obj))
      throw new RenderFault(
        `cannot read '${String(key)}' of a ${obj.constructor?.name ?? 'object'}: only plain data is visible to templates`,
        at,
      )
    const k = typeof key === 'number' ? String(key) : key
    const v = obj[k]
    if (typeof v !== 'function') return v
    if (!isEnumerable.call(obj, k)) return undefined
    throw new RenderFault(`'${k}' is a function; templates can only read data`, at)
  }
  if (typeof obj === 'string') return readIndexed(obj, key)
  if (typeof obj === 'function') throw new RenderFault('functions are not visible to templates', at)
  return undefined
}

function readIndexed(obj: ArrayLike<unknown>, key: string | number): unknown {
  if (typeof key === 'string') return key === 'length' ? obj.length : undefined
  if (!Number.isInteger(key)) return undefined
  const i = key < 0 ? obj.length + key : key
  if (i < 0 || i >= obj.length) return undefined
  const v = obj[i]
  if (typeof v === 'function') throw new RenderFault('functions are not visible to templates', -1)
  return v
}

/** A top-level name; `MISSING` tells "not in scope" apart from a key whose value is undefined. */
export const MISSING: unique symbol = /* @__PURE__ */ Symbol('missing')

export function readRoot(scope: Record<string, unknown>, name: string, at: number): unknown {
  // A plain read first (the hot path). Inherited members of Object.prototype are all functions except
  // `__proto__`, which never gets here (blocked at compile time), so a non-function hit is scope data.
  const v = scope[name]
  if (v === undefined) return Object.hasOwn(scope, name) ? undefined : MISSING
  if (typeof v !== 'function') return v
  if (!isEnumerable.call(scope, name)) return MISSING
  throw new RenderFault(`'${name}' is a function; templates can only read data`, at)
}

/** Python slicing of a list or string (`xs[1:]`, `s[:100]`, `xs[::-1]`). */
export function sliceOf(obj: unknown, start: unknown, stop: unknown, step: unknown, at: number): unknown {
  if (!Array.isArray(obj) && typeof obj !== 'string') throw new RenderFault(`cannot slice a ${typeName(obj)}`, at)
  for (const b of [start, stop, step]) {
    if (b !== undefined && b !== null && !Number.isInteger(b))
      throw new RenderFault(`slice bounds must be integers, got ${typeName(b)}`, at)
  }
  const st = (step ?? 1) as number
  if (st === 0) throw new RenderFault('slice step cannot be zero', at)
  const len = obj.length
  if (st === 1) return obj.slice((start ?? 0) as number, (stop ?? len) as number)
  const clamp = (v: unknown, dflt: number, lo: number, hi: number): number => {
    if (v === undefined || v === null) return dflt
    const n = (v as number) < 0 ? (v as number) + len : (v as number)
    return Math.min(Math.max(n, lo), hi)
  }
  const from = st > 0 ? clamp(start, 0, 0, len) : clamp(start, len - 1, -1, len - 1)
  const to = st > 0 ? clamp(stop, len, 0, len) : clamp(stop, -1, -1, len - 1)
  const picked: unknown[] = []
  for (let i = from; st > 0 ? i < to : i > to; i += st) picked.push(obj[i])
  return typeof obj === 'string' ? picked.join('') : picked
}
