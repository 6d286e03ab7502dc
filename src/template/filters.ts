/**
 * The filters. Each takes the piped value and up to three arguments (positional, or by the names in `params`),
 * and throws a `RenderFault` on misuse; the caller adds the filter name and the template. String filters read
 * their input as text (so `none | upper` is ''), the rest insist on the type they need.
 *
 * Deliberate choices: `default` replaces a missing value *and* null (JSON null is how "no value" arrives from
 * models and YAML); `int`/`float` follow Jinja and return their default (0) for text that is not a number;
 * `fromjson` fails loudly on bad JSON (upstream returned the input unchanged, hiding the problem); `tojson` does
 * not HTML-escape as Jinja's does, since its output goes into prompts and payloads, not web pages.
 */

import { parseJson } from '../core/json.ts'
import { createHash } from 'node:crypto'
import { readKey } from './access.ts'
import { RenderFault } from './faults.ts'
import { checkLength, isDict, toJson, toText, truthy, typeName } from './values.ts'

type FilterFn = (v: unknown, a: unknown, b: unknown, c: unknown) => unknown

export interface FilterDef {
  params: string[]
  /** Runs on a missing value instead of failing (only `default`). */
  lenient?: boolean
  fn: FilterFn
}

const text = (fn: (s: string, a: unknown, b: unknown, c: unknown) => unknown, params: string[] = []): FilterDef => ({
  params,
  fn: (v, a, b, c) => fn(toText(v), a, b, c),
})

const defaultFilter: FilterDef = {
  params: ['default_value', 'boolean'],
  lenient: true,
  fn: (v, dflt, boolean) => ((boolean === true ? !truthy(v) : v === undefined || v === null) ? (dflt === undefined ? '' : dflt) : v),
}

const lengthFilter: FilterDef = {
  params: [],
  fn: (v) => {
    if (typeof v === 'string' || Array.isArray(v)) return v.length
    if (typeof v === 'object' && v !== null && isDict(v)) return Object.keys(v).length
    throw expected('a string, list or dict', v)
  },
}

export const FILTERS: Record<string, FilterDef> = {
  __proto__: null as never,
  default: defaultFilter,
  d: defaultFilter,
  length: lengthFilter,
  count: lengthFilter,
  tojson: { params: ['indent'], fn: (v, indent) => toJson(v, typeof indent === 'number' ? Math.min(indent, 10) : undefined) },
  fromjson: {
    params: [],
    fn: (v) => {
      if (typeof v !== 'string') throw expected('a string of JSON', v)
      try {
        return parseJson(v, 'input')
      } catch (e) {
        throw new RenderFault(e instanceof Error ? e.message : String(e), -1)
      }
    },
  },
  upper: text((s) => s.toUpperCase()),
  lower: text((s) => s.toLowerCase()),
  capitalize: text((s) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase()),
  trim: text((s) => s.trim()),
  string: text((s) => s),
  replace: text((s, old, rep, count) => replace(s, toText(old), toText(rep), count), ['old', 'new', 'count']),
  join: {
    params: ['d', 'attribute'],
    fn: (v, sep, attr) => {
      const xs = list(v)
      const parts = xs.map((x) => toText(attr === undefined ? x : (readKey(x, attr, -1) ?? null)))
      return parts.join(sep === undefined ? '' : toText(sep))
    },
  },
  first: { params: [], fn: (v) => (typeof v === 'string' ? v[0] : list(v)[0]) },
  last: { params: [], fn: (v) => (typeof v === 'string' ? v[v.length - 1] : list(v).at(-1)) },
  reverse: { params: [], fn: (v) => (typeof v === 'string' ? [...v].reverse().join('') : [...list(v)].reverse()) },
  round: { params: ['precision', 'method'], fn: (v, p, m) => round(number(v), p, m) },
  abs: { params: [], fn: (v) => Math.abs(number(v)) },
  int: { params: ['default'], fn: (v, dflt) => toInt(v, dflt ?? 0) },
  float: { params: ['default'], fn: (v, dflt) => toFloat(v, dflt ?? 0) },
  keys: { params: [], fn: (v) => Object.keys(dict(v)) },
  values: { params: [], fn: (v) => Object.values(dict(v)) },
  items: { params: [], fn: (v) => Object.entries(dict(v)) },
  // Python's string and dict methods, which templates also reach as `s.split(',')` (METHODS below).
  get: {
    params: ['key', 'default'],
    fn: (v, key, dflt) => (Object.hasOwn(dict(v), toText(key)) ? (readKey(v, toText(key), -1) ?? null) : (dflt ?? null)),
  },
  split: text((s, sep, max) => split(s, sep, max), ['sep', 'maxsplit']),
  startswith: text((s, prefix) => s.startsWith(toText(prefix)), ['prefix']),
  endswith: text((s, suffix) => s.endsWith(toText(suffix)), ['suffix']),
  map: {
    params: ['filter', 'attribute', 'default'],
    fn: (v, name, attribute, dflt) => {
      const xs = list(v)
      if (attribute !== undefined) return xs.map((x) => readKey(x, toText(attribute), -1) ?? dflt ?? null)
      const f = typeof name === 'string' && Object.hasOwn(FILTERS, name) && !CALL_ONLY.has(name) ? FILTERS[name]! : undefined
      if (!f) throw new RenderFault(`map needs attribute='…' or the name of a filter, got ${typeName(name)}`, -1)
      return xs.map((x) => f.fn(x, undefined, undefined, undefined))
    },
  },
  hash: {
    params: ['algorithm'],
    fn: (v, algorithm) => {
      const name = algorithm === undefined ? 'sha256' : toText(algorithm)
      if (!HASHES.has(name)) throw new RenderFault(`hash supports ${[...HASHES].join(', ')}, not '${name}'`, -1)
      return createHash(name)
        .update(typeof v === 'string' ? v : toJson(v, undefined))
        .digest('hex')
    },
  },
  isoformat: text((s) => s),
  strftime: text((s, format) => strftime(s, toText(format)), ['format']),
  now: { params: [], fn: () => new Date().toISOString() },
}

/** Filters a template reaches only as a call (`now()`), never after `|`. */
export const CALL_ONLY: ReadonlySet<string> = new Set(['now'])

/** `x.name(args)` in a template means the filter `x | FILTER(args)`: the only calls templates allow. */
export const METHODS: Readonly<Record<string, string>> = {
  __proto__: null as never,
  items: 'items',
  keys: 'keys',
  values: 'values',
  get: 'get',
  split: 'split',
  strip: 'trim',
  lower: 'lower',
  upper: 'upper',
  replace: 'replace',
  startswith: 'startswith',
  endswith: 'endswith',
  isoformat: 'isoformat',
  strftime: 'strftime',
}

const HASHES = new Set(['sha256', 'sha1', 'md5', 'sha512'])

/** Python's `str.split`: on runs of whitespace (dropping empty parts) without a separator, else on it exactly. */
function split(s: string, sep: unknown, max: unknown): string[] {
  const limit = max === undefined || max === null || max === -1 ? Infinity : Number(max)
  if (sep === undefined || sep === null) {
    const parts = s.trim() === '' ? [] : s.trim().split(/\s+/)
    return limit < parts.length ? [...parts.slice(0, limit), parts.slice(limit).join(' ')] : parts
  }
  const by = toText(sep)
  if (by === '') throw new RenderFault('split: empty separator', -1)
  const parts = s.split(by)
  checkLength(parts.length)
  return limit < parts.length - 1 ? [...parts.slice(0, limit), parts.slice(limit).join(by)] : parts
}

/** `%Y-%m-%d %H:%M:%S` and the like, for an ISO time such as `now()` gives (UTC). */
function strftime(iso: string, format: string): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) throw new RenderFault(`strftime needs a date and time (ISO 8601), got '${iso.slice(0, 40)}'`, -1)
  const two = (n: number): string => String(n).padStart(2, '0')
  const parts: Record<string, string> = {
    Y: String(d.getUTCFullYear()),
    m: two(d.getUTCMonth() + 1),
    d: two(d.getUTCDate()),
    H: two(d.getUTCHours()),
    M: two(d.getUTCMinutes()),
    S: two(d.getUTCSeconds()),
    '%': '%',
  }
  return format.replace(/%([YmdHMS%])/g, (_, c: string) => parts[c]!)
}

function replace(s: string, old: string, rep: string, count: unknown): string {
  if (count === undefined || count === null) {
    const parts = s.split(old)
    checkLength(s.length + (parts.length - 1) * (rep.length - old.length))
    return parts.join(rep)
  }
  if (!Number.isInteger(count)) throw expected('an integer count', count)
  let out = ''
  let from = 0
  for (let n = 0; n < (count as number) && old !== ''; n++) {
    const at = s.indexOf(old, from)
    if (at === -1) break
    out += s.slice(from, at) + rep
    checkLength(out.length)
    from = at + old.length
  }
  return out + s.slice(from)
}

/** Half away from zero (Jinja's 'common'), or 'ceil' / 'floor', at `precision` decimals. */
function round(v: number, precision: unknown, method: unknown): number {
  const p = precision === undefined ? 0 : precision
  if (!Number.isInteger(p) || (p as number) < 0 || (p as number) > 15) throw expected('a precision from 0 to 15', p)
  const f = 10 ** (p as number)
  const m = method ?? 'common'
  // Scaling through the exponent form avoids 1.005 * 100 = 100.49999….
  const exact = Number(`${Math.abs(v)}e${p as number}`)
  const scaled = Number.isFinite(exact) ? exact : Math.abs(v) * f
  if (m === 'common') return (Math.sign(v) * Math.round(scaled)) / f
  if (m === 'ceil') return Math.ceil(v * f) / f
  if (m === 'floor') return Math.floor(v * f) / f
  throw expected("method 'common', 'ceil' or 'floor'", m)
}

function toInt(v: unknown, dflt: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v.trim()) : NaN
  return Number.isFinite(n) ? Math.trunc(n) : dflt
}

function toFloat(v: unknown, dflt: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v.trim()) : NaN
  return Number.isNaN(n) ? dflt : n
}

function number(v: unknown): number {
  if (typeof v !== 'number') throw expected('a number', v)
  return v
}

function list(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw expected('a list', v)
  return v
}

function dict(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !isDict(v)) throw expected('a dict', v)
  return v
}

function expected(what: string, got: unknown): RenderFault {
  return new RenderFault(`expected ${what}, got ${typeName(got)}`, -1)
}
