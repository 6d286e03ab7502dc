/**
 * Jinja tests (`x is defined`, `x is not none`, …). `defined`, `undefined` and `none` accept a missing value —
 * the chain in front of them is evaluated leniently, so `state.a.b is defined` is false when `state.a` is
 * missing, rather than an error. `none` is true for a missing value as well as for null: upstream TEA read
 * missing keys as None, and agents written for it test `is none` to mean "not set".
 */

import { RenderFault } from './faults.ts'
import { isDict, typeName } from './values.ts'

export interface TestDef {
  /** Runs on a missing value instead of failing. */
  lenient: boolean
  arity: number
  fn: (v: unknown, arg?: unknown) => boolean
}

export const TESTS: Record<string, TestDef> = {
  __proto__: null as never,
  defined: { lenient: true, arity: 0, fn: (v) => v !== undefined },
  undefined: { lenient: true, arity: 0, fn: (v) => v === undefined },
  none: { lenient: true, arity: 0, fn: (v) => v === null || v === undefined },
  string: { lenient: false, arity: 0, fn: (v) => typeof v === 'string' },
  number: { lenient: false, arity: 0, fn: (v) => typeof v === 'number' },
  integer: { lenient: false, arity: 0, fn: (v) => Number.isInteger(v) },
  boolean: { lenient: false, arity: 0, fn: (v) => typeof v === 'boolean' },
  mapping: { lenient: false, arity: 0, fn: (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && isDict(v) },
  sequence: { lenient: false, arity: 0, fn: (v) => Array.isArray(v) || typeof v === 'string' },
  iterable: {
    lenient: false,
    arity: 0,
    fn: (v) => Array.isArray(v) || typeof v === 'string' || (typeof v === 'object' && v !== null && isDict(v)),
  },
  even: { lenient: false, arity: 0, fn: (v) => integer(v, 'even') % 2 === 0 },
  odd: { lenient: false, arity: 0, fn: (v) => Math.abs(integer(v, 'odd') % 2) === 1 },
  divisibleby: { lenient: false, arity: 1, fn: (v, n) => integer(v, 'divisibleby') % integer(n, 'divisibleby') === 0 },
}

function integer(v: unknown, test: string): number {
  if (!Number.isInteger(v)) throw new RenderFault(`test '${test}' expects an integer, got ${typeName(v)}`, -1)
  return v as number
}
