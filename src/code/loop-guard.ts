/**
 * Bounds the running time of `run:` code without paying for `vm`'s per-call watchdog (measured at ~80 µs a call,
 * against ~0.03 µs for a direct call). Every loop condition gets a check: `while (c)` becomes
 * `while (TICK && (c))`, `for (a; c; b)` becomes `for (a; TICK && (c); b)`, and `for (x of xs)` iterates
 * through `__gi(…)`. TICK counts iterations inline and calls the guard, which reads the clock, every 1,024, so a
 * runaway loop throws within a few ms of its deadline.
 *
 * This is a lexer, not a parser: it tracks strings, template literals, comments and regex literals so keywords
 * inside them are left alone. A `/` is a regex or a division depending on what came before; the lexer decides
 * from the previous token (and knows that `if (…)`, `while (…)` and `for (…)` heads start a statement). Where it
 * could still guess wrong, the guess shows: a string, comment or regex then runs unterminated, and `guardLoops`
 * throws `UnguardableCode`. The caller then falls back to `vm`'s own timeout, and so it does when the rewrite
 * does not compile: a lexing mistake costs speed, never the time limit.
 */

/** The lexer lost track of the code (an unterminated token or bracket in code that may still compile). */
export class UnguardableCode extends Error {
  constructor(what: string, at: number) {
    super(`loop guard: ${what} at offset ${at}`)
    this.name = 'UnguardableCode'
  }
}

const IDENT = /[A-Za-z0-9_$]/

/**
 * The check put into every loop condition: count inline (cheap) and call the guard, which reads the clock, once
 * every 1,024 iterations. `__t` is declared by `guardBody`.
 */
const TICK = '(++__t & 1023 || __g())'

/** A function body with its loops guarded and the iteration counter they share. */
export function guardBody(code: string): string {
  return `let __t = 0;\n${guardLoops(code)}`
}

/** Keywords after which a `/` starts a regex literal rather than a division. */
const REGEX_AFTER_WORD = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
])

export function guardLoops(code: string): string {
  let out = ''
  let i = 0
  let lastSignificant = '' // last token, to tell regex from division
  while (i < code.length) {
    const c = code[i]!
    const next = code[i + 1]
    if (c === '/' && next === '/') {
      const end = code.indexOf('\n', i)
      const stop = end === -1 ? code.length : end
      out += code.slice(i, stop)
      i = stop
    } else if (c === '/' && next === '*') {
      const end = code.indexOf('*/', i + 2)
      if (end === -1) throw new UnguardableCode('unterminated comment', i)
      out += code.slice(i, end + 2)
      i = end + 2
    } else if (c === '"' || c === "'" || c === '`') {
      const stop = skipString(code, i)
      if (stop === -1) throw new UnguardableCode('unterminated string', i)
      out += code.slice(i, stop)
      i = stop
      lastSignificant = 'str'
    } else if (c === '/' && regexAllowed(lastSignificant)) {
      const stop = skipRegex(code, i)
      if (stop === -1) throw new UnguardableCode('unterminated regex', i)
      out += code.slice(i, stop)
      i = stop
      lastSignificant = 'regex'
    } else if (IDENT.test(c) && !IDENT.test(code[i - 1] ?? ' ')) {
      let j = i
      while (j < code.length && IDENT.test(code[j]!)) j++
      const word = code.slice(i, j)
      out += word
      i = j
      const head = code[i - word.length - 1] !== '.' && (word === 'while' || word === 'for' || word === 'if' || word === 'with')
      // `for await` is left alone: it yields to the event loop, where the caller's timer bounds it.
      const open = head ? skipSpace(code, i) : -1
      if (open !== -1 && code[open] === '(') {
        const close = matchParen(code, open)
        if (close === -1) throw new UnguardableCode(`unbalanced ${word} (…)`, open)
        const inner = code.slice(open + 1, close)
        const guarded = word === 'while' ? `${TICK} && (${guardLoops(inner)})` : word === 'for' ? guardFor(inner) : guardLoops(inner)
        out += `${code.slice(i, open)}(${guarded})`
        i = close + 1
        // A statement follows a head, so a `/` after it starts a regex.
        lastSignificant = ''
        continue
      }
      lastSignificant = word
    } else {
      out += c
      i++
      if (!/\s/.test(c)) lastSignificant = c
    }
  }
  return out
}

function guardFor(inner: string): string {
  const parts = splitTopLevel(inner, ';')
  if (parts.length === 3) {
    const cond = parts[1]!.trim()
    return `${guardLoops(parts[0]!)};${cond ? ` ${TICK} && (${guardLoops(cond)})` : ` ${TICK}`};${guardLoops(parts[2]!)}`
  }
  // for-in walks a finite key list; for-of can walk an endless iterator, so it goes through the guard.
  const m = /^([\s\S]*?\s)of(\s[\s\S]*)$/.exec(inner)
  if (parts.length === 1 && m) return `${m[1]}of __gi(${guardLoops(m[2]!)})`
  return guardLoops(inner)
}

function regexAllowed(last: string): boolean {
  if (last === '' || REGEX_AFTER_WORD.has(last)) return true
  if (last === ')' || last === ']' || last === '}' || last === 'str' || last === 'regex') return false
  return !IDENT.test(last[last.length - 1]!)
}

function skipString(code: string, start: number): number {
  const quote = code[start]
  let i = start + 1
  while (i < code.length) {
    const c = code[i]
    if (c === '\\') i += 2
    else if (c === quote) return i + 1
    else if (quote === '`' && c === '$' && code[i + 1] === '{') {
      const close = matchBrace(code, i + 1)
      if (close === -1) return -1
      i = close + 1
    } else i++
  }
  return -1
}

function skipRegex(code: string, start: number): number {
  let i = start + 1
  let inClass = false
  while (i < code.length) {
    const c = code[i]
    if (c === '\\') i += 2
    else if (c === '\n') return -1
    else if (c === '[') (inClass = true), i++
    else if (c === ']') (inClass = false), i++
    else if (c === '/' && !inClass) {
      i++
      while (i < code.length && IDENT.test(code[i]!)) i++
      return i
    } else i++
  }
  return -1
}

function skipSpace(code: string, i: number): number {
  while (i < code.length && /\s/.test(code[i]!)) i++
  return i
}

function matchBrace(code: string, open: number): number {
  return matchPair(code, open, '{', '}')
}

function matchParen(code: string, open: number): number {
  return matchPair(code, open, '(', ')')
}

/** Index of the bracket closing the one at `open`, skipping strings and comments; -1 when unbalanced. */
function matchPair(code: string, open: number, o: string, cl: string): number {
  let depth = 0
  for (let i = open; i < code.length; i++) {
    const c = code[i]
    if (c === '"' || c === "'" || c === '`') {
      const stop = skipString(code, i)
      if (stop === -1) return -1
      i = stop - 1
    } else if (c === '/' && code[i + 1] === '/') i = code.indexOf('\n', i) === -1 ? code.length : code.indexOf('\n', i)
    else if (c === '/' && code[i + 1] === '*') i = code.indexOf('*/', i) === -1 ? code.length : code.indexOf('*/', i) + 1
    else if (c === o) depth++
    else if (c === cl && --depth === 0) return i
  }
  return -1
}

function splitTopLevel(text: string, sep: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"' || c === "'" || c === '`') {
      const stop = skipString(text, i)
      if (stop === -1) throw new UnguardableCode('unterminated string', i)
      i = stop - 1
    } else if (c === '(' || c === '[' || c === '{') depth++
    else if (c === ')' || c === ']' || c === '}') depth--
    else if (c === sep && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}
