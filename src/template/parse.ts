/**
 * Turns scanned pieces into statements: text, `{{ expr }}`, `if/elif/else/endif`, `for … in … [if …]` with an
 * optional `else` (taken when nothing was iterated) and `endfor`. Block nesting is bounded like expression
 * nesting, so a hostile template cannot exhaust the stack.
 */

import type { Expr, Stmt } from './ast.ts'
import { SyntaxFault } from './faults.ts'
import { checkKey, ExprParser } from './parse-expr.ts'
import type { Piece } from './scan.ts'
import { describe, TokenStream } from './token-stream.ts'

export const MAX_BLOCK_NESTING = 64
const TAGS = ['if', 'elif', 'else', 'endif', 'for', 'endfor', 'raw', 'endraw']
const RESERVED = /* @__PURE__ */ new Set([
  'loop',
  'true',
  'false',
  'True',
  'False',
  'none',
  'None',
  'null',
  'in',
  'not',
  'and',
  'or',
  'if',
  'else',
  'is',
])

export function parseTemplate(pieces: Piece[]): Stmt[] {
  const p = new TemplateParser(pieces)
  const { body, end } = p.parseBody([], 0)
  if (end !== null) throw new SyntaxFault(`unexpected '{% ${end.tag} %}'`, end.at)
  return body
}

/** Parses one whole expression from a stream, requiring the stream to end after it. */
export function parseWholeExpression(ts: TokenStream): Expr {
  const e = new ExprParser(ts).parseExpression()
  ts.expectEnd()
  return e
}

interface EndTag {
  tag: string
  at: number
  ts: TokenStream
}

class TemplateParser {
  private i = 0
  constructor(private readonly pieces: Piece[]) {}

  /** Reads statements until one of `stops` (or the end, returned as null). */
  parseBody(stops: string[], depth: number, opener = 0): { body: Stmt[]; end: EndTag | null } {
    if (depth > MAX_BLOCK_NESTING) {
      throw new SyntaxFault(`blocks nested too deeply (more than ${MAX_BLOCK_NESTING} levels)`, this.pieces[this.i - 1]?.start ?? 0)
    }
    const body: Stmt[] = []
    while (this.i < this.pieces.length) {
      const piece = this.pieces[this.i++]!
      if (piece.kind === 'text') {
        body.push({ k: 'text', value: piece.value })
        continue
      }
      const ts = new TokenStream(piece.tokens)
      if (piece.kind === 'output') {
        body.push({ k: 'out', expr: parseWholeExpression(ts) })
        continue
      }
      const head = ts.peek
      if (head.type !== 'name' || !TAGS.includes(head.value)) {
        const what = head.type === 'end' ? 'an empty tag' : `unknown tag ${describe(head)}`
        throw new SyntaxFault(`${what}; supported tags: if, elif, else, endif, for, endfor, raw`, head.start)
      }
      ts.next()
      if (head.value === 'if') body.push(this.parseIf(ts, depth, piece.start))
      else if (head.value === 'for') body.push(this.parseFor(ts, depth, piece.start))
      else if (stops.includes(head.value)) return { body, end: { tag: head.value, at: head.start, ts } }
      else throw new SyntaxFault(`'{% ${head.value} %}' without a matching opening tag`, head.start)
    }
    if (stops.length > 0) {
      const close = stops[stops.length - 1]!
      throw new SyntaxFault(`'{% ${close.slice(3)} %}' is never closed (missing '{% ${close} %}')`, opener)
    }
    return { body, end: null }
  }

  private parseIf(ts: TokenStream, depth: number, at: number): Stmt {
    const branches: Array<{ test: Expr; body: Stmt[] }> = []
    let test = parseWholeExpression(ts)
    for (;;) {
      const { body, end } = this.parseBody(['elif', 'else', 'endif'], depth + 1, at)
      branches.push({ test, body })
      if (end!.tag === 'elif') {
        test = parseWholeExpression(end!.ts)
        continue
      }
      end!.ts.expectEnd()
      if (end!.tag === 'endif') return { k: 'if', branches, else: null }
      const rest = this.parseBody(['endif'], depth + 1, at)
      rest.end!.ts.expectEnd()
      return { k: 'if', branches, else: rest.body }
    }
  }

  private parseFor(ts: TokenStream, depth: number, at: number): Stmt {
    const targets: string[] = []
    do {
      const t = ts.expectName("(a loop variable) after 'for'")
      checkKey(t.value, t.start)
      if (RESERVED.has(t.value)) throw new SyntaxFault(`'${t.value}' cannot be a loop variable`, t.start)
      targets.push(t.value)
    } while (ts.skipOp(','))
    if (!ts.skipName('in')) throw ts.unexpected("'in'")
    const parser = new ExprParser(ts)
    const iter = parser.parseExpression(false)
    const filter = ts.skipName('if') ? parser.parseExpression() : null
    ts.expectEnd()
    const { body, end } = this.parseBody(['else', 'endfor'], depth + 1, at)
    end!.ts.expectEnd()
    if (end!.tag === 'endfor') return { k: 'for', targets, iter, filter, body, else: null, s: at }
    const rest = this.parseBody(['endfor'], depth + 1, at)
    rest.end!.ts.expectEnd()
    return { k: 'for', targets, iter, filter, body, else: rest.body, s: at }
  }
}
