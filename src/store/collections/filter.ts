/**
 * TEA's metadata filters (rag_actions.py `_match_filter`): every key of the filter must hold. A key ending in `_gte`,
 * `_lte`, `_gt`, `_lt` compares the field before the suffix with the value (numbers with numbers, strings with
 * strings; any other pair, or an absent field, does not match), `_ne` keeps items whose field differs (an absent
 * one too), `_in` keeps items whose field is one of a list; any other key is an exact match on the field of that name.
 */

import { TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'

export type MetadataFilter = Record<string, unknown>
export type Metadata = Record<string, unknown>

type Test = (metadata: Metadata) => boolean

const MAX_FILTER_KEYS = 32
const MAX_IN_VALUES = 1000
const SUFFIXES = ['_gte', '_lte', '_gt', '_lt', '_ne', '_in'] as const

/** A predicate over metadata; a filter of the wrong shape is DOCUMENT_INVALID naming the key. */
export function compileFilter(filter: MetadataFilter | undefined): Test | undefined {
  if (filter === undefined) return undefined
  if (!isPlainObject(filter)) throw bad('filter must be a mapping of metadata fields to values')
  const entries = Object.entries(filter)
  if (entries.length > MAX_FILTER_KEYS) throw bad(`filter has ${entries.length} keys; at most ${MAX_FILTER_KEYS}`)
  const tests = entries.map(([key, want]) => compileKey(key, want))
  return (metadata) => tests.every((t) => t(metadata))
}

function compileKey(key: string, want: unknown): Test {
  const suffix = SUFFIXES.find((s) => key.endsWith(s) && key.length > s.length)
  if (!suffix) return (m) => equal(m[key], want)
  const field = key.slice(0, -suffix.length)
  switch (suffix) {
    case '_ne':
      return (m) => !equal(m[field], want)
    case '_in': {
      if (!Array.isArray(want)) throw bad(`filter ${key} must be a list of values`)
      if (want.length > MAX_IN_VALUES) throw bad(`filter ${key} has ${want.length} values; at most ${MAX_IN_VALUES}`)
      return (m) => Object.hasOwn(m, field) && want.some((w) => equal(m[field], w))
    }
    default: {
      if (typeof want !== 'number' && typeof want !== 'string') throw bad(`filter ${key} compares with a number or a string`)
      const holds = ORDER[suffix]
      return (m) => {
        const have = m[field]
        return Object.hasOwn(m, field) && typeof have === typeof want && holds(have as number | string, want)
      }
    }
  }
}

const ORDER = {
  _gte: (a: number | string, b: number | string) => a >= b,
  _lte: (a: number | string, b: number | string) => a <= b,
  _gt: (a: number | string, b: number | string) => a > b,
  _lt: (a: number | string, b: number | string) => a < b,
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => equal((a as Metadata)[k], (b as Metadata)[k]))
}

function bad(message: string): TeaError {
  return new TeaError('DOCUMENT_INVALID', message, { hint: 'filter: {field: value, field_gte: n, field_in: [a, b], …}' })
}
