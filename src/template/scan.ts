/**
 * Splits a template into text, output tags (`{{ }}`) and block tags (`{% %}`), dropping comments (`{# #}`) and
 * applying whitespace control: a `-` inside a delimiter (`{{-`, `-%}`, `{#-` …) strips all whitespace, newlines
 * included, on that side of the tag. `{% raw %}…{% endraw %}` yields its body as text, untouched.
 */

import { SyntaxFault } from './faults.ts'
import { lexTag, type Token } from './tokens.ts'

export type Piece = { kind: 'text'; value: string; start: number } | { kind: 'output' | 'block'; tokens: Token[]; start: number }

export function scanTemplate(src: string): Piece[] {
  const pieces: Piece[] = []
  let i = 0
  let trimNext = false
  for (;;) {
    const j = nextTag(src, i)
    let text = src.slice(i, j === -1 ? src.length : j)
    if (trimNext) text = text.trimStart()
    trimNext = false
    if (j === -1) {
      pushText(pieces, text, i)
      return pieces
    }
    const kind = src[j + 1]
    const trimBefore = src[j + 2] === '-'
    if (trimBefore) text = text.trimEnd()
    pushText(pieces, text, i)
    const body = j + (trimBefore ? 3 : 2)
    if (kind === '#') {
      const close = src.indexOf('#}', body)
      if (close === -1) throw new SyntaxFault("comment '{#' is never closed (expected '#}')", j)
      trimNext = src[close - 1] === '-' && close - 1 >= body
      i = close + 2
      continue
    }
    const lexed = lexTag(src, body, kind === '{' ? '}}' : '%}', j)
    trimNext = lexed.trimAfter
    i = lexed.next
    const first = lexed.tokens[0]!
    if (kind === '%' && first.type === 'name' && first.value === 'raw' && lexed.tokens[1]?.type === 'end') {
      const rawEnd = /\{%-?\s*endraw\s*-?%\}/g
      rawEnd.lastIndex = i
      const m = rawEnd.exec(src)
      if (m === null) throw new SyntaxFault("'{% raw %}' is never closed (expected '{% endraw %}')", j)
      let rawText = src.slice(i, m.index)
      if (trimNext) rawText = rawText.trimStart()
      if (m[0].startsWith('{%-')) rawText = rawText.trimEnd()
      pushText(pieces, rawText, i)
      trimNext = m[0].endsWith('-%}')
      i = m.index + m[0].length
      continue
    }
    pieces.push({ kind: kind === '{' ? 'output' : 'block', tokens: lexed.tokens, start: j })
  }
}

/** Offset of the next `{{`, `{%` or `{#` at or after `from`, or -1. */
function nextTag(src: string, from: number): number {
  for (let j = src.indexOf('{', from); j !== -1; j = src.indexOf('{', j + 1)) {
    const c = src[j + 1]
    if (c === '{' || c === '%' || c === '#') return j
  }
  return -1
}

function pushText(pieces: Piece[], value: string, start: number): void {
  if (value !== '') pieces.push({ kind: 'text', value, start })
}

/** True when `src` holds no template syntax at all. */
export function isStaticText(src: string): boolean {
  return nextTag(src, 0) === -1
}
