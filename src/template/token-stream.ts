/** A cursor over one tag's tokens, with the helpers the parsers share. */

import { SyntaxFault } from './faults.ts'
import type { Token } from './tokens.ts'

export class TokenStream {
  private i = 0
  constructor(readonly tokens: Token[]) {}

  get peek(): Token {
    return this.tokens[this.i]!
  }

  peekAt(ahead: number): Token {
    return this.tokens[Math.min(this.i + ahead, this.tokens.length - 1)]!
  }

  next(): Token {
    const t = this.tokens[this.i]!
    if (t.type !== 'end') this.i++
    return t
  }

  isOp(value: string): boolean {
    const t = this.peek
    return t.type === 'op' && t.value === value
  }

  isName(value: string): boolean {
    const t = this.peek
    return t.type === 'name' && t.value === value
  }

  skipOp(value: string): boolean {
    if (!this.isOp(value)) return false
    this.i++
    return true
  }

  skipName(value: string): boolean {
    if (!this.isName(value)) return false
    this.i++
    return true
  }

  expectOp(value: string, context: string): Token {
    if (!this.isOp(value)) throw this.unexpected(`'${value}' ${context}`)
    return this.next()
  }

  expectName(context: string): Token {
    if (this.peek.type !== 'name') throw this.unexpected(`a name ${context}`)
    return this.next()
  }

  expectEnd(): void {
    if (this.peek.type !== 'end') throw this.unexpected(this.closer())
  }

  unexpected(expected: string): SyntaxFault {
    return new SyntaxFault(`expected ${expected}, found ${describe(this.peek)}`, this.peek.start)
  }

  private closer(): string {
    const last = this.tokens[this.tokens.length - 1]!
    return last.value === '' ? 'the end of the expression' : `'${last.value}'`
  }
}

export function describe(t: Token): string {
  if (t.type === 'end') return t.value === '' ? 'the end of the expression' : `'${t.value}'`
  if (t.type === 'str') return `string ${JSON.stringify(t.value)}`
  return `'${t.value}'`
}
