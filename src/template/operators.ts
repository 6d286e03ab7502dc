/**
 * Operator semantics, following Python where JavaScript would coerce silently: `'a' + 1` is an error (not
 * `'a1'`), `/` is true division, `//` and `%` floor toward negative infinity, division by zero is an error,
 * `'ab' * 3` and `[1] * 3` repeat, and ordering compares numbers with numbers and strings with strings only.
 * Booleans count as 0 and 1 in arithmetic, as in Python. Operands arrive defined: the caller has already
 * refused `undefined`, naming the expression.
 */

import type { BinaryOp, CompareOp } from './ast.ts'
import { RenderFault } from './faults.ts'
import { budget, checkLength, checkSize, isDict, looseEqual, sizeUpTo, toText, typeName } from './values.ts'

export function binary(op: BinaryOp, a: unknown, b: unknown, at: number): unknown {
  if (op === '~') return joined(toText(a), toText(b))
  if (op === '+') {
    if (typeof a === 'string' && typeof b === 'string') return joined(a, b)
    if (Array.isArray(a) && Array.isArray(b)) {
      checkLength(a.length + b.length)
      return [...a, ...b]
    }
  }
  if (op === '*') {
    const rep = repeat(a, b) ?? repeat(b, a)
    if (rep !== undefined) return rep
  }
  const x = num(a)
  const y = num(b)
  if (x === undefined || y === undefined) {
    throw new RenderFault(`unsupported operand types for ${op}: ${typeName(a)} and ${typeName(b)}`, at)
  }
  switch (op) {
    case '+':
      return x + y
    case '-':
      return x - y
    case '*':
      return x * y
    case '**':
      return x ** y
    default:
      if (y === 0) throw new RenderFault(`division by zero (${op})`, at)
      if (op === '/') return x / y
      if (op === '//') return Math.floor(x / y)
      return ((x % y) + y) % y
  }
}

function joined(a: string, b: string): string {
  checkSize(a.length + b.length)
  return a + b
}

function repeat(seq: unknown, n: unknown): unknown {
  if (typeof seq !== 'string' && !Array.isArray(seq)) return undefined
  if (!Number.isInteger(n)) return undefined
  const times = Math.max(0, n as number)
  checkLength(seq.length * times)
  if (times > 0) checkSize((typeof seq === 'string' ? seq.length : sizeUpTo(seq, budget.bytes)) * times)
  if (typeof seq === 'string') return seq.repeat(times)
  const out: unknown[] = []
  for (let i = 0; i < times; i++) for (const x of seq) out.push(x)
  return out
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return v
  if (typeof v === 'boolean') return v ? 1 : 0
  return undefined
}

export function compare(op: CompareOp, a: unknown, b: unknown, at: number): boolean {
  switch (op) {
    case '==':
      return looseEqual(a, b)
    case '!=':
      return !looseEqual(a, b)
    case 'in':
      return contains(b, a, at)
    case 'not in':
      return !contains(b, a, at)
  }
  if (!((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string'))) {
    throw new RenderFault(`cannot compare ${typeName(a)} ${op} ${typeName(b)}`, at)
  }
  switch (op) {
    case '<':
      return a < b
    case '<=':
      return a <= b
    case '>':
      return a > b
    default:
      return a >= b
  }
}

function contains(container: unknown, item: unknown, at: number): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string') throw new RenderFault(`'in <string>' needs a string on the left, got ${typeName(item)}`, at)
    return container.includes(item)
  }
  if (Array.isArray(container)) {
    for (const x of container) if (looseEqual(x, item)) return true
    return false
  }
  if (typeof container === 'object' && container !== null && isDict(container)) {
    return (typeof item === 'string' || typeof item === 'number') && Object.hasOwn(container, String(item))
  }
  throw new RenderFault(`cannot test membership in a ${typeName(container)}`, at)
}
