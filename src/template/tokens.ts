/**
 * The expression lexer. It reads one tag's worth of tokens straight out of the template source, starting after
 * the opening delimiter, and stops at the closing one. `}}` closes an output tag only when no `{` is open, so a
 * dict literal such as `{{ {'a': {'b': 1}} }}` lexes as Jinja's does; `%}` always closes a block tag.
 */

import { SyntaxFault } from './faults.ts'

export type TokenType = 'name' | 'num' | 'str' | 'op' | 'end'

export interface Token {
  type: TokenType
  /** Operator text, name, or the decoded string; for numbers the source text. */
  value: string
  num: number
  start: number
  end: number
}

export interface LexedTag {
  tokens: Token[]
  /** Offset just past the closing delimiter. */
  next: number
  /** `-}}` / `-%}`: strip whitespace after the tag. */
  trimAfter: boolean
}

const OPS2 = /* @__PURE__ */ new Set(['**', '//', '==', '!=', '<=', '>='])
const OPS1 = '+-*/%~<>=()[]{},:.|'

/** `closer` is `}}` or `%}`; `null` reads to the end of `src` (a bare expression). */
export function lexTag(src: string, pos: number, closer: '}}' | '%}' | null, opener: number): LexedTag {
  const tokens: Token[] = []
  let braces = 0
  let i = pos
  const n = src.length
  for (;;) {
    while (i < n && isSpace(src.charCodeAt(i))) i++
    if (i >= n) {
      if (closer === null) {
        tokens.push(tok('end', '', i, i))
        return { tokens, next: i, trimAfter: false }
      }
      throw new SyntaxFault(`'${closer === '}}' ? '{{' : '{%'}' is never closed (expected '${closer}')`, opener)
    }
    const c = src[i]!
    if (closer !== null) {
      const trim = c === '-' && src.startsWith(closer, i + 1)
      if ((trim || src.startsWith(closer, i)) && (closer === '%}' || braces === 0)) {
        tokens.push(tok('end', closer, i, i + (trim ? 3 : 2)))
        return { tokens, next: i + (trim ? 3 : 2), trimAfter: trim }
      }
    }
    if (isNameStart(c)) {
      let j = i + 1
      while (j < n && isNamePart(src[j]!)) j++
      tokens.push(tok('name', src.slice(i, j), i, j))
      i = j
    } else if (isDigit(c)) {
      i = lexNumber(src, i, tokens)
    } else if (c === '"' || c === "'") {
      i = lexString(src, i, tokens)
    } else {
      const two = src.slice(i, i + 2)
      const op = OPS2.has(two) ? two : OPS1.includes(c) ? c : ''
      if (op === '') throw new SyntaxFault(`unexpected character ${JSON.stringify(c)}`, i)
      if (op === '{') braces++
      else if (op === '}' && braces > 0) braces--
      tokens.push(tok('op', op, i, i + op.length))
      i += op.length
    }
  }
}

function lexNumber(src: string, i: number, out: Token[]): number {
  const m = /^\d+(\.\d+)?([eE][+-]?\d+)?/.exec(src.slice(i, i + 64))!
  // `xs.0.name` — after a `.`, digits are an index, so a fraction part belongs to the next access.
  const prev = out[out.length - 1]
  const text = prev?.type === 'op' && prev.value === '.' ? /^\d+/.exec(m[0])![0] : m[0]
  const t = tok('num', text, i, i + text.length)
  t.num = Number(text)
  out.push(t)
  return i + text.length
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f', v: '\v' }

function lexString(src: string, start: number, out: Token[]): number {
  const q = src[start]!
  let value = ''
  let i = start + 1
  for (;;) {
    if (i >= src.length) throw new SyntaxFault('string is never closed', start)
    const c = src[i]!
    if (c === q) break
    if (c !== '\\') {
      value += c
      i++
      continue
    }
    const e = src[i + 1]
    if (e === undefined) throw new SyntaxFault('string is never closed', start)
    if (e === 'u' || e === 'x') {
      const len = e === 'u' ? 4 : 2
      const hex = src.slice(i + 2, i + 2 + len)
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) throw new SyntaxFault(`bad \\${e} escape`, i)
      value += String.fromCharCode(parseInt(hex, 16))
      i += 2 + len
      continue
    }
    // Python keeps an unknown escape as written (`'\d'` is backslash + d); so do we.
    value += e === '\\' || e === "'" || e === '"' ? e : (ESCAPES[e] ?? `\\${e}`)
    i += 2
  }
  out.push(tok('str', value, start, i + 1))
  return i + 1
}

function tok(type: TokenType, value: string, start: number, end: number): Token {
  return { type, value, num: 0, start, end }
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13
}
function isDigit(c: string): boolean {
  return c >= '0' && c <= '9'
}
function isNameStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_'
}
function isNamePart(c: string): boolean {
  return isNameStart(c) || isDigit(c)
}
