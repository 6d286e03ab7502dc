/**
 * How template values behave as text and as conditions.
 *
 * Text: strings as they are, numbers as JavaScript prints them, booleans `true`/`false`, `null` as the empty
 * string, lists and dicts as JSON. `undefined` has no text: the caller raises an error naming the expression
 * (StrictUndefined), because printing nothing would hide a typo in a prompt.
 */

import { RenderFault, TooLargeFault } from './faults.ts'

/** Longest string or list a template may build (`'ab' * n`, `replace`): keeps a typo from eating the board's RAM. */
export const MAX_BUILD = 10_000_000

export function checkLength(n: number): void {
  if (n > MAX_BUILD) throw new RenderFault(`result too large (${n} items; the limit is ${MAX_BUILD})`, -1)
}

/** Default of `settings.max_template_bytes`: the most text one render may build (1 MiB; a board has 1–4 GB). */
export const DEFAULT_MAX_TEMPLATE_BYTES = 1 << 20

/**
 * The cap of the render under way. Renders are synchronous and never nest, so one slot serves every run in the
 * process: `render` sets it on entry and restores it on exit (compile-template.ts).
 */
export const budget = { bytes: DEFAULT_MAX_TEMPLATE_BYTES }

/**
 * Refuses a value about to be built when its text would pass the cap: checked where a template makes something
 * bigger than its inputs (repetition, concatenation, string filters, JSON, the text of a loop), before the memory
 * is spent. A value read from state is not built, so `{{ state.doc }}` passes whatever its size.
 */
export function checkSize(n: number): void {
  if (n > budget.bytes) throw new TooLargeFault(n, budget.bytes)
}

/**
 * The length of `v` as JSON text, counted only until it passes `limit` (the walk stops there, so measuring a
 * huge value costs no more than the cap). Shared references count each time they appear, as JSON repeats them.
 */
export function sizeUpTo(v: unknown, limit: number): number {
  let total = 0
  const stack: unknown[] = [v]
  while (stack.length && total <= limit) {
    const x = stack.pop()
    if (typeof x === 'string') total += x.length + 2
    else if (Array.isArray(x)) {
      total += 2 + x.length
      for (let i = x.length - 1; i >= 0 && stack.length <= limit; i--) stack.push(x[i])
    } else if (typeof x === 'object' && x !== null) {
      for (const k in x) {
        if (!Object.hasOwn(x, k)) continue
        total += k.length + 4
        stack.push((x as Record<string, unknown>)[k])
        if (total > limit) break
      }
      total += 2
    } else total += typeof x === 'number' ? String(x).length : 5
  }
  return total
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

/**
 * Whether `v` contains itself. Only asked once a value measured too large; the walk gives up (no cycle found)
 * after as many steps as the cap has bytes, so shared subtrees cannot make it slow.
 */
function hasCycle(v: unknown, path: Set<object>, steps = { left: budget.bytes }): boolean {
  if (typeof v !== 'object' || v === null || --steps.left < 0) return false
  if (path.has(v)) return true
  path.add(v)
  for (const x of Array.isArray(v) ? v : Object.values(v)) if (hasCycle(x, path, steps)) return true
  path.delete(v)
  return false
}

export function toJson(v: unknown, indent: number | string | undefined): string {
  if (typeof v === 'function' || typeof v === 'symbol') throw new RenderFault(`a ${typeof v} cannot be rendered`, -1)
  // A cycle measures as endless: it is left to JSON.stringify, which names it.
  if (typeof v === 'object' && v !== null && sizeUpTo(v, budget.bytes) > budget.bytes && !hasCycle(v, new Set())) checkSize(Infinity)
  let text: string | undefined
  try {
    text = JSON.stringify(v, null, indent)
  } catch (e) {
    throw new RenderFault(`value cannot be converted to JSON (${e instanceof Error ? e.message : String(e)})`, -1)
  }
  if (text === undefined) throw new RenderFault(`a ${typeName(v)} cannot be converted to JSON`, -1)
  checkSize(text.length)
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
