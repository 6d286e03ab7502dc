/**
 * Compiles an expression tree into nested closures (no `eval`, no `new Function`). Loop variables are resolved
 * at compile time to slots of a per-render array; every other name is read from the caller's scope.
 *
 * The undefined rule (StrictUndefined, with the exceptions users rely on):
 * - a name not in scope is an error, and so is reading `.x` / `[i]` of undefined or null;
 * - a key missing from an existing dict or list reads as undefined, without error;
 * - undefined may then flow only into `default`, the `defined`/`undefined`/`none` tests, truthiness (`if`,
 *   `and`, `or`, `not`, `a if c else b`, where it is false) and `==`/`!=` (where it equals only none); any
 *   other use — printing it, arithmetic, ordering, `in`, a filter, a loop — is an error naming the expression;
 * - in front of `default`, `is defined`, `is undefined` and `is none`, the whole access chain is lenient:
 *   unknown names and reads through undefined/null give undefined instead of an error.
 */

import { BLOCKED_KEYS, MISSING, readKey, readRoot, sliceOf } from './access.ts'
import type { Expr } from './ast.ts'
import { OPTIONAL_HINT, RenderFault, SyntaxFault, TooLargeFault, UndefinedFault } from './faults.ts'
import { FILTERS } from './filters.ts'
import { TESTS } from './is-tests.ts'
import { binary, compare } from './operators.ts'
import { checkSize, isDict, truthy } from './values.ts'
import { closest } from '../core/util.ts'

export type Scope = Record<string, unknown>
export type Slots = unknown[]
export type Eval = (s: Scope, l: Slots) => unknown

/**
 * How a `{{ }}` turns its value into text where plain printing would be wrong: inside `run:` code, a value must
 * reach the code as data, escaped for the string literal it sits in or printed as a literal of the code's
 * language (src/python/code-template.ts). `at` is the expression's offset in the source; `text` prints the value
 * as the template would anywhere else.
 */
export type OutputHook = (value: unknown, at: number, text: () => string) => string

export interface CompileContext {
  src: string
  output?: OutputHook
  /** Loop variables visible here: name → slot. */
  locals: Map<string, number>
  slotCount: number
  roots: Set<string>
  /**
   * TEA's rule for files written for TEA (TemplateLimits.missingIsNone): a key missing from a dict reads as none,
   * as TEA's DotDict gives it, where tea would give undefined. Not in front of `default`/`is defined` (lenient).
   */
  missingIsNone?: boolean
}

export function compileExpr(e: Expr, cx: CompileContext, lenient = false): Eval {
  switch (e.k) {
    case 'lit': {
      const v = e.value
      return () => v
    }
    case 'name':
      return compileName(e.name, e.s, cx, lenient)
    case 'attr': {
      const obj = compileExpr(e.obj, cx, lenient)
      if (cx.missingIsNone && !lenient) return noneWhenMissing(obj, () => e.key, text(cx, e.obj), e.s)
      return compileAttr(obj, e.key, text(cx, e.obj), e.s, lenient)
    }
    case 'index': {
      const obj = compileExpr(e.obj, cx, lenient)
      const key = defined(e.index, cx)
      const objText = text(cx, e.obj)
      if (cx.missingIsNone && !lenient) return noneWhenMissing(obj, key, objText, e.s)
      return (s, l) => {
        const o = obj(s, l)
        const k = key(s, l)
        if (o === undefined || o === null) return throughNothing(o, objText, k, e.s, lenient)
        return readKey(o, k, e.s)
      }
    }
    case 'slice': {
      const obj = defined(e.obj, cx)
      const [a, b, c] = [e.start, e.stop, e.step].map((x) => (x === null ? () => undefined : defined(x, cx))) as [Eval, Eval, Eval]
      return (s, l) => sliceOf(obj(s, l), a(s, l), b(s, l), c(s, l), e.s)
    }
    case 'list': {
      const items = e.items.map((x) => defined(x, cx))
      return (s, l) => items.map((f) => f(s, l))
    }
    case 'dict': {
      const entries = e.entries.map(([k, v]) => [defined(k, cx), defined(v, cx), k.s] as const)
      return (s, l) => {
        const out: Record<string, unknown> = {}
        for (const [k, v, at] of entries) {
          const key = k(s, l)
          if (typeof key !== 'string' && typeof key !== 'number') throw new RenderFault('dict keys must be strings or numbers', at)
          // Refused outright, so a dict built here can never carry `__proto__` into a state merge.
          if (BLOCKED_KEYS.has(String(key))) throw new RenderFault(`access to '${String(key)}' is not allowed in templates`, at)
          out[key] = v(s, l)
        }
        return out
      }
    }
    case 'not': {
      const arg = compileExpr(e.arg, cx)
      return (s, l) => !truthy(arg(s, l))
    }
    case 'neg':
    case 'pos': {
      const arg = defined(e.arg, cx)
      const sign = e.k === 'neg' ? -1 : 1
      return (s, l) => {
        const v = arg(s, l)
        if (typeof v === 'number') return sign * v
        if (typeof v === 'boolean') return sign * (v ? 1 : 0)
        throw new RenderFault(`unary ${e.k === 'neg' ? '-' : '+'} needs a number`, e.s)
      }
    }
    case 'bin': {
      const [l0, r0, op] = [defined(e.l, cx), defined(e.r, cx), e.op]
      return (s, l) => binary(op, l0(s, l), r0(s, l), e.s)
    }
    case 'and': {
      const [a, b] = [compileExpr(e.l, cx), compileExpr(e.r, cx)]
      return (s, l) => {
        const v = a(s, l)
        return truthy(v) ? b(s, l) : v
      }
    }
    case 'or': {
      const [a, b] = [compileExpr(e.l, cx), compileExpr(e.r, cx)]
      return (s, l) => {
        const v = a(s, l)
        return truthy(v) ? v : b(s, l)
      }
    }
    case 'cmp':
      return compileCompare(e, cx)
    case 'cond': {
      const test = compileExpr(e.test, cx)
      const then = compileExpr(e.then, cx)
      // `x if c` without else gives '' (Jinja would give undefined, which StrictUndefined refuses to print;
      // `{{ ', ' if not loop.last }}` is too common an idiom to break).
      const alt = e.else === null ? () => '' : compileExpr(e.else, cx)
      return (s, l) => (truthy(test(s, l)) ? then(s, l) : alt(s, l))
    }
    case 'filter':
      return compileFilter(e, cx)
    case 'test':
      return compileTest(e, cx)
  }
}

/** Compiles `e` and refuses an undefined result, naming the expression. */
export function defined(e: Expr, cx: CompileContext): Eval {
  const f = compileExpr(e, cx)
  if (e.k === 'lit') return f
  const t = text(cx, e)
  return (s, l) => {
    const v = f(s, l)
    if (v === undefined) throw undefinedFault(t, e.s)
    return v
  }
}

export function undefinedFault(exprText: string, at: number): RenderFault {
  return new UndefinedFault(`'${exprText}' is undefined`, at, OPTIONAL_HINT)
}

function compileName(name: string, at: number, cx: CompileContext, lenient: boolean): Eval {
  const slot = cx.locals.get(name)
  if (slot !== undefined) return (_s, l) => l[slot]
  cx.roots.add(name)
  return (s) => {
    const v = readRoot(s, name, at)
    if (v !== MISSING) return v
    if (lenient) return undefined
    throw unknownName(name, s, at)
  }
}

function unknownName(name: string, s: Scope, at: number): RenderFault {
  const known = Object.keys(s)
  const near = closest(name, known)
  const hint = near.length > 0 ? ` (did you mean '${near[0]}'?)` : known.length > 0 ? ` (known names: ${known.join(', ')})` : ''
  return new RenderFault(`'${name}' is undefined${hint}`, at, OPTIONAL_HINT)
}

/** `.key` with a compile-time key: the hot path of `{{ state.x }}`, kept to a few checks. */
function compileAttr(obj: Eval, key: string | number, objText: string, at: number, lenient: boolean): Eval {
  const k = String(key)
  return (s, l) => {
    const o = obj(s, l)
    // Fast path for plain objects. `constructor === Object` is an inline-cached load, far cheaper than
    // getPrototypeOf; a value read this way that is not a function can only be own data (everything inherited
    // from Object.prototype is a function, bar the blocked `__proto__`). Anything else takes `readKey`.
    if (typeof o === 'object' && o !== null && (o as { constructor?: unknown }).constructor === Object) {
      const v = (o as Record<string, unknown>)[k]
      if (typeof v !== 'function') return v
    }
    if (o === undefined || o === null) return throughNothing(o, objText, key, at, lenient)
    return readKey(o, key, at)
  }
}

/**
 * `obj.key` / `obj[key]` under TEA's DotDict rule: a key missing from a dict reads as none. Reading through none or
 * undefined still fails, and a list index out of range is still undefined, as in TEA's Jinja.
 */
function noneWhenMissing(obj: Eval, key: Eval, objText: string, at: number): Eval {
  return (s, l) => {
    const o = obj(s, l)
    const k = key(s, l)
    if (o === undefined || o === null) return throughNothing(o, objText, k, at, false)
    const v = readKey(o, k, at)
    return v === undefined && typeof o === 'object' && isDict(o) ? null : v
  }
}

function throughNothing(o: null | undefined, objText: string, key: unknown, at: number, lenient: boolean): undefined {
  if (lenient) return undefined
  throw new UndefinedFault(`'${objText}' is ${o === null ? 'none' : 'undefined'} (reading '${String(key)}')`, at, OPTIONAL_HINT)
}

function compileCompare(e: Extract<Expr, { k: 'cmp' }>, cx: CompileContext): Eval {
  const ops = e.rest.map(([op]) => op)
  // An operand may be undefined only when every comparison it takes part in is == or !=.
  const lax = (i: number): boolean => [ops[i - 1], ops[i]].every((op) => op === undefined || op === '==' || op === '!=')
  const operands = [e.first, ...e.rest.map(([, x]) => x)].map((x, i) => (lax(i) ? compileExpr(x, cx) : defined(x, cx)))
  if (ops.length === 1) {
    const [a, b, op] = [operands[0]!, operands[1]!, ops[0]!]
    return (s, l) => compare(op, a(s, l), b(s, l), e.s)
  }
  // Chained, as in Python: `a < b < c` is `a < b and b < c`, each operand evaluated once.
  return (s, l) => {
    let left = operands[0]!(s, l)
    for (let i = 0; i < ops.length; i++) {
      const right = operands[i + 1]!(s, l)
      if (!compare(ops[i]!, left, right, e.s)) return false
      left = right
    }
    return true
  }
}

function compileFilter(e: Extract<Expr, { k: 'filter' }>, cx: CompileContext): Eval {
  const def = FILTERS[e.name]!
  if (e.args.length + e.kwargs.length > def.params.length) {
    throw new SyntaxFault(`filter '${e.name}' takes at most ${def.params.length} argument(s)`, e.at)
  }
  const args: Array<Eval | undefined> = e.args.map((a) => defined(a, cx))
  for (const [name, value] of e.kwargs) {
    const i = def.params.indexOf(name)
    if (i === -1) throw new SyntaxFault(`filter '${e.name}' has no argument '${name}' (it takes: ${def.params.join(', ') || 'none'})`, e.at)
    if (args[i] !== undefined) throw new SyntaxFault(`filter '${e.name}' got argument '${name}' twice`, e.at)
    args[i] = defined(value, cx)
  }
  const none = (): undefined => undefined
  const [a, b, c] = [args[0] ?? none, args[1] ?? none, args[2] ?? none]
  const arg = compileExpr(e.arg, cx, def.lenient === true)
  const argText = text(cx, e.arg)
  const { fn, lenient } = def
  return (s, l) => {
    const v = arg(s, l)
    if (v === undefined && lenient !== true) throw new UndefinedFault(`'${argText}' is undefined (input of filter '${e.name}')`, e.s)
    const x = a(s, l)
    const y = b(s, l)
    const z = c(s, l)
    let out: unknown
    try {
      out = fn(v, x, y, z)
    } catch (err) {
      throw located(err, `filter '${e.name}'`, e.at)
    }
    if (typeof out === 'string') checkSize(out.length)
    return out
  }
}

function compileTest(e: Extract<Expr, { k: 'test' }>, cx: CompileContext): Eval {
  const def = TESTS[e.name]!
  if (e.args.length !== def.arity) throw new SyntaxFault(`test '${e.name}' takes ${def.arity} argument(s), got ${e.args.length}`, e.at)
  const arg = compileExpr(e.arg, cx, def.lenient)
  const param = e.args[0] === undefined ? () => undefined : defined(e.args[0], cx)
  const argText = text(cx, e.arg)
  const { fn, lenient } = def
  const negate = e.negate
  return (s, l) => {
    const v = arg(s, l)
    if (v === undefined && !lenient) throw new UndefinedFault(`'${argText}' is undefined (tested with 'is ${e.name}')`, e.s)
    const p = param(s, l)
    try {
      return fn(v, p) !== negate
    } catch (err) {
      throw located(err, `test '${e.name}'`, e.at)
    }
  }
}

/** Gives an offset and a context to a fault raised by shared helpers, which know neither. */
export function located(err: unknown, context: string, at: number): unknown {
  if (err instanceof TooLargeFault) return err
  if (err instanceof RenderFault && err.offset < 0) return new RenderFault(`${context}: ${err.message}`, at)
  if (err instanceof RenderFault) return err
  return new RenderFault(`${context} failed: ${err instanceof Error ? err.message : String(err)}`, at)
}

function text(cx: CompileContext, e: Expr): string {
  return cx.src.slice(e.s, e.e)
}
