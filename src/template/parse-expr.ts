/**
 * Recursive-descent parser for Jinja expressions, with Jinja's precedence (lowest first): `a if c else b`, `or`,
 * `and`, `not`, comparisons (chained, `in`, `not in`), `+ -`, `~`, `* / // %`, `**`, unary `- +`, then a
 * primary with `.attr` / `[index]` / `[a:b]` access, then `| filter` and `is test`. So `a ~ b | upper` filters
 * `b` only, as in Jinja.
 *
 * Nesting is bounded twice: the parser's own recursion (so 10,000 `(` is a coded error, not a stack overflow),
 * and the depth of the resulting tree (so a 10,000-term `a + a + …` cannot overflow the evaluator either).
 */

import { BLOCKED_KEYS } from './access.ts'
import type { BinaryOp, CompareOp, Expr } from './ast.ts'
import { SyntaxFault } from './faults.ts'
import { CALL_ONLY, FILTERS, METHODS } from './filters.ts'
import { TESTS } from './is-tests.ts'
import { describe, TokenStream } from './token-stream.ts'
import { closest } from '../core/util.ts'

export const MAX_NESTING = 64
export const MAX_TREE_DEPTH = 256

const COMPARE = /* @__PURE__ */ new Set(['==', '!=', '<', '<=', '>', '>='])
const KEYWORDS: Record<string, unknown> = { true: true, True: true, false: false, False: false, none: null, None: null, null: null }

export class ExprParser {
  private nesting = 0
  private readonly depths = new Map<Expr, number>()

  constructor(readonly ts: TokenStream) {}

  parseExpression(allowCond = true): Expr {
    if (++this.nesting > MAX_NESTING) {
      throw new SyntaxFault(`expression nested too deeply (more than ${MAX_NESTING} levels)`, this.ts.peek.start)
    }
    let e = this.parseOr()
    if (allowCond && this.ts.skipName('if')) {
      const test = this.parseOr()
      const alt = this.ts.skipName('else') ? this.parseExpression() : null
      e = this.node({ k: 'cond', test, then: e, else: alt, s: e.s, e: (alt ?? test).e }, e, test, alt)
    }
    this.nesting--
    return e
  }

  private parseOr(): Expr {
    let l = this.parseAnd()
    while (this.ts.skipName('or')) {
      const r = this.parseAnd()
      l = this.node({ k: 'or', l, r, s: l.s, e: r.e }, l, r)
    }
    return l
  }

  private parseAnd(): Expr {
    let l = this.parseNot()
    while (this.ts.skipName('and')) {
      const r = this.parseNot()
      l = this.node({ k: 'and', l, r, s: l.s, e: r.e }, l, r)
    }
    return l
  }

  private parseNot(): Expr {
    if (this.ts.isName('not')) {
      const at = this.ts.next().start
      this.enter()
      const arg = this.parseNot()
      this.nesting--
      return this.node({ k: 'not', arg, s: at, e: arg.e }, arg)
    }
    return this.parseCompare()
  }

  private parseCompare(): Expr {
    const first = this.parseMath1()
    const rest: Array<[CompareOp, Expr]> = []
    for (;;) {
      const t = this.ts.peek
      let op: CompareOp
      if (t.type === 'op' && COMPARE.has(t.value)) op = t.value as CompareOp
      else if (this.ts.isName('in')) op = 'in'
      else if (this.ts.isName('not') && this.ts.peekAt(1).type === 'name' && this.ts.peekAt(1).value === 'in') {
        this.ts.next()
        op = 'not in'
      } else break
      this.ts.next()
      rest.push([op, this.parseMath1()])
    }
    if (rest.length === 0) return first
    return this.node({ k: 'cmp', first, rest, s: first.s, e: rest[rest.length - 1]![1].e }, first, ...rest.map((x) => x[1]))
  }

  private parseMath1(): Expr {
    return this.binaryLevel(['+', '-'], () => this.parseConcat())
  }
  private parseConcat(): Expr {
    return this.binaryLevel(['~'], () => this.parseMath2())
  }
  private parseMath2(): Expr {
    return this.binaryLevel(['*', '/', '//', '%'], () => this.parsePow())
  }
  private parsePow(): Expr {
    return this.binaryLevel(['**'], () => this.parseUnary(true))
  }

  private binaryLevel(ops: string[], operand: () => Expr): Expr {
    let l = operand()
    for (;;) {
      const t = this.ts.peek
      if (t.type !== 'op' || !ops.includes(t.value)) return l
      this.ts.next()
      const r = operand()
      l = this.node({ k: 'bin', op: t.value as BinaryOp, l, r, s: l.s, e: r.e }, l, r)
    }
  }

  private parseUnary(withFilters: boolean): Expr {
    const t = this.ts.peek
    let e: Expr
    if (t.type === 'op' && (t.value === '-' || t.value === '+')) {
      this.ts.next()
      this.enter()
      const arg = this.parseUnary(false)
      this.nesting--
      e = this.node({ k: t.value === '-' ? 'neg' : 'pos', arg, s: t.start, e: arg.e }, arg)
    } else {
      e = this.parsePostfix(this.parsePrimary())
    }
    return withFilters ? this.parseFilters(e) : e
  }

  private parsePrimary(): Expr {
    const t = this.ts.next()
    if (t.type === 'num') return this.node({ k: 'lit', value: t.num, s: t.start, e: t.end })
    if (t.type === 'str') return this.node({ k: 'lit', value: t.value, s: t.start, e: t.end })
    if (t.type === 'name') {
      if (Object.hasOwn(KEYWORDS, t.value)) return this.node({ k: 'lit', value: KEYWORDS[t.value], s: t.start, e: t.end })
      if (t.value === 'now' && this.ts.isOp('(')) {
        // `now()`: the current time as an ISO 8601 string (UTC), as Jinja users call TEA's `now()`.
        const { end } = this.parseArgs(t.end)
        return this.node({
          k: 'filter',
          arg: this.node({ k: 'lit', value: null, s: t.start, e: t.end }),
          name: 'now',
          args: [],
          kwargs: [],
          at: t.start,
          s: t.start,
          e: end,
        })
      }
      checkKey(t.value, t.start)
      return this.node({ k: 'name', name: t.value, s: t.start, e: t.end })
    }
    if (t.type === 'op' && t.value === '(') {
      const items = this.parseSequence(')')
      const end = this.ts.expectOp(')', 'to close the parenthesis').end
      if (items.length === 1 && !items.trailingComma) return items[0]!
      return this.node({ k: 'list', items, s: t.start, e: end }, ...items)
    }
    if (t.type === 'op' && t.value === '[') {
      const items = this.parseSequence(']')
      const end = this.ts.expectOp(']', 'to close the list').end
      return this.node({ k: 'list', items, s: t.start, e: end }, ...items)
    }
    if (t.type === 'op' && t.value === '{') return this.parseDict(t.start)
    throw new SyntaxFault(`expected an expression, found ${describe(t)}`, t.start)
  }

  private parseSequence(close: string): Expr[] & { trailingComma?: boolean } {
    const items: Expr[] & { trailingComma?: boolean } = []
    while (!this.ts.isOp(close)) {
      items.push(this.parseExpression())
      if (!this.ts.skipOp(',')) return items
      items.trailingComma = true
    }
    return items
  }

  private parseDict(start: number): Expr {
    const entries: Array<[Expr, Expr]> = []
    while (!this.ts.isOp('}')) {
      const key = this.parseExpression()
      if (key.k === 'lit' && typeof key.value === 'string') checkKey(key.value, key.s)
      this.ts.expectOp(':', 'after a dict key')
      entries.push([key, this.parseExpression()])
      if (!this.ts.skipOp(',')) break
    }
    const end = this.ts.expectOp('}', 'to close the dict').end
    return this.node({ k: 'dict', entries, s: start, e: end }, ...entries.flat())
  }

  private parsePostfix(e: Expr): Expr {
    for (;;) {
      if (this.ts.skipOp('.')) {
        const t = this.ts.next()
        if (t.type !== 'name' && t.type !== 'num')
          throw new SyntaxFault(`expected an attribute name after '.', found ${describe(t)}`, t.start)
        if (t.type === 'name') checkKey(t.value, t.start)
        e = this.node({ k: 'attr', obj: e, key: t.type === 'num' ? t.num : t.value, s: e.s, e: t.end }, e)
      } else if (this.ts.skipOp('[')) {
        e = this.parseSubscript(e)
      } else if (this.ts.isOp('(')) {
        // The safe methods Jinja users write (`x.items()`, `s.lower()`, `d.get('k', 0)`) are the filters of the
        // same meaning (METHODS): a fixed list, never a call on whatever object the value is.
        const method = e.k === 'attr' && typeof e.key === 'string' && Object.hasOwn(METHODS, e.key) ? METHODS[e.key]! : undefined
        if (e.k !== 'attr' || method === undefined) {
          throw new SyntaxFault(
            `calling functions or methods is not allowed in templates, except ${Object.keys(METHODS)
              .map((m) => `.${m}()`)
              .join(' ')} and now(); use a filter instead (\`value | name(args)\`)`,
            this.ts.peek.start,
          )
        }
        const { args, kwargs, end } = this.parseArgs(e.e)
        e = this.node(
          { k: 'filter', arg: e.obj, name: method, args, kwargs, at: e.e - String(e.key).length, s: e.s, e: end },
          e.obj,
          ...args,
          ...kwargs.map((x) => x[1]),
        )
      } else return e
    }
  }

  private parseSubscript(obj: Expr): Expr {
    const parts: Array<Expr | null> = [null]
    let colons = 0
    while (!this.ts.isOp(']')) {
      if (this.ts.skipOp(':')) {
        if (++colons > 2) throw new SyntaxFault("a slice takes at most two ':'", this.ts.peek.start)
        parts.push(null)
      } else {
        if (parts[colons] !== null) throw this.ts.unexpected("']'")
        parts[colons] = this.parseExpression()
      }
    }
    const end = this.ts.next().end
    if (colons === 0) {
      if (parts[0] === null) throw new SyntaxFault('expected an index inside [ ]', end - 1)
      return this.node({ k: 'index', obj, index: parts[0]!, s: obj.s, e: end }, obj, parts[0]!)
    }
    const [start = null, stop = null, step = null] = parts
    return this.node({ k: 'slice', obj, start, stop, step, s: obj.s, e: end }, obj, start, stop, step)
  }

  private parseFilters(e: Expr): Expr {
    for (;;) {
      if (this.ts.skipOp('|')) {
        const name = this.ts.expectName("(a filter) after '|'")
        if (!Object.hasOwn(FILTERS, name.value) || CALL_ONLY.has(name.value))
          throw unknown(
            'filter',
            name.value,
            name.start,
            Object.keys(FILTERS).filter((f) => !CALL_ONLY.has(f)),
          )
        const { args, kwargs, end } = this.parseArgs(name.end)
        e = this.node(
          { k: 'filter', arg: e, name: name.value, args, kwargs, at: name.start, s: e.s, e: end },
          e,
          ...args,
          ...kwargs.map((x) => x[1]),
        )
      } else if (this.ts.skipName('is')) {
        const negate = this.ts.skipName('not')
        // `none` lexes as a name, so here it names the test rather than the literal.
        const name = this.ts.expectName("(a test) after 'is'")
        if (!Object.hasOwn(TESTS, name.value)) throw unknown('test', name.value, name.start, Object.keys(TESTS))
        const { args, end } = this.parseArgs(name.end)
        e = this.node({ k: 'test', arg: e, name: name.value, negate, args, at: name.start, s: e.s, e: end }, e, ...args)
      } else return e
    }
  }

  private parseArgs(end: number): { args: Expr[]; kwargs: Array<[string, Expr]>; end: number } {
    const args: Expr[] = []
    const kwargs: Array<[string, Expr]> = []
    if (!this.ts.skipOp('(')) return { args, kwargs, end }
    while (!this.ts.isOp(')')) {
      if (this.ts.peek.type === 'name' && this.ts.peekAt(1).type === 'op' && this.ts.peekAt(1).value === '=') {
        const key = this.ts.next().value
        this.ts.next()
        kwargs.push([key, this.parseExpression()])
      } else {
        if (kwargs.length > 0) throw new SyntaxFault('a positional argument cannot follow a keyword argument', this.ts.peek.start)
        args.push(this.parseExpression())
      }
      if (!this.ts.skipOp(',')) break
    }
    return { args, kwargs, end: this.ts.expectOp(')', 'to close the argument list').end }
  }

  private enter(): void {
    if (++this.nesting > MAX_NESTING) {
      throw new SyntaxFault(`expression nested too deeply (more than ${MAX_NESTING} levels)`, this.ts.peek.start)
    }
  }

  /** Records the tree depth of `e` and refuses trees too deep to evaluate safely. */
  private node(e: Expr, ...children: Array<Expr | null>): Expr {
    let d = 0
    for (const c of children) if (c !== null) d = Math.max(d, this.depths.get(c) ?? 0)
    if (d + 1 > MAX_TREE_DEPTH) throw new SyntaxFault(`expression too deep (more than ${MAX_TREE_DEPTH} operations nested)`, e.s)
    this.depths.set(e, d + 1)
    return e
  }
}

/** Keys that would reach an object's prototype machinery are refused wherever they are spelled out. */
export function checkKey(key: string, at: number): void {
  if (BLOCKED_KEYS.has(key)) throw new SyntaxFault(`access to '${key}' is not allowed in templates`, at)
}

function unknown(kind: string, name: string, at: number, known: string[]): SyntaxFault {
  const near = closest(name, known)
  const hint = near.length > 0 ? `; did you mean ${near.map((n) => `'${n}'`).join(' or ')}?` : `; known ${kind}s: ${known.join(', ')}`
  return new SyntaxFault(`unknown ${kind} '${name}'${hint}`, at)
}
