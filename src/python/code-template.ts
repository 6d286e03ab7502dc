/**
 * `{{ }}` inside Python `run:` code, as data. TEA renders a `run:` body as a Jinja template before running it, so
 * `name = "{{ state.name }}"` works in TEA's files, and so does `name = "x\"; import os; os.system(…)"` when the
 * name comes from a form or a fetched page: the text became code. tea keeps TEA's syntax but never splices text
 * into source. The body is read once as Python (strings with their prefixes and quotes, f-string fields,
 * comments), template tags taken as opaque, and each `{{ }}` is printed for the place it stands in:
 *
 * - inside a string literal: the value's text escaped for that literal (quotes, backslashes, line breaks, control
 *   characters; braces in an f-string; non-ASCII as bytes in a bytes literal). A raw string cannot escape, so a
 *   value it cannot hold as it is (a backslash, a quote, a line break) is refused;
 * - in a comment: the text with its line breaks turned to spaces, so it stays in the comment;
 * - in code: numbers, booleans, null, lists and mappings as Python literals (`True`, `None`, `[1, "a"]`); text is
 *   refused (CODE_TEMPLATE_UNSAFE) — quote it, or pass it through `state`.
 *
 * TEA's older `${name}` (a variable of the agent) goes through the same printing, on the rendered code.
 */

import { TeaError } from '../core/errors.ts'
import type { ActionContext, OutputHook } from '../actions/types.ts'

type Place =
  | { kind: 'code' }
  | { kind: 'comment' }
  | { kind: 'string'; quote: string; triple: boolean; raw: boolean; bytes: boolean; f: boolean }

/** The code as TEA's Python runtime would run it, with every value put in as data. */
export function pythonSource(code: string, ctx: ActionContext): string {
  const rendered = /\{[{%]/.test(code) ? ctx.renderCode(code, pythonOutput) : code
  if (!rendered.includes('${')) return rendered
  const placeAt = pythonPlaces(rendered, false)
  return rendered.replace(/\$\{([^}]+)\}/g, (whole, name: string, at: number) =>
    Object.hasOwn(ctx.variables, name) ? print(ctx.variables[name], placeAt(at), () => textOf(ctx.variables[name]), `\${${name}}`) : whole,
  )
}

/** The output hook for one Python template: each `{{ }}` printed for its place in `source`. */
export function pythonOutput(source: string): OutputHook {
  const placeAt = pythonPlaces(source, true)
  return (value, at, text) => print(value, placeAt(at), text, exprAt(source, at))
}

function print(value: unknown, place: Place, text: () => string, what: string): string {
  if (place.kind === 'comment') return text().replace(/[\r\n]/g, ' ')
  if (place.kind === 'code') return literal(value, what)
  const t = text()
  if (place.raw) {
    const bad = place.f ? /[\\\r\n'"{}]/ : place.triple ? /[\\'"]/ : /[\\\r\n'"]/
    if (bad.test(t)) {
      throw unsafe(
        `${what} is inside a raw string (r'…'), which cannot escape the backslash, quote or line break in its value`,
        'drop the r prefix from that string literal',
      )
    }
    return t
  }
  return escapeInString(t, place.bytes, place.f)
}

function escapeInString(t: string, bytes: boolean, f: boolean): string {
  let out = ''
  for (const ch of t) {
    const c = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === '"' || ch === "'") out += `\\${ch}`
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (c < 0x20 || c === 0x7f) out += `\\x${hex(c, 2)}`
    else if (f && (ch === '{' || ch === '}')) out += ch + ch
    else if (bytes && c > 0x7f) for (const b of Buffer.from(ch, 'utf8')) out += `\\x${hex(b, 2)}`
    // A lone surrogate is no UTF-8: Python's escape keeps it in the str.
    else if (c >= 0xd800 && c <= 0xdfff) out += `\\u${hex(c, 4)}`
    else out += ch
  }
  return out
}

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0')

/** A value as a Python literal; text is refused (it would be code). */
function literal(value: unknown, what: string, nested = false): string {
  if (value === null || value === undefined) return 'None'
  if (typeof value === 'boolean') return value ? 'True' : 'False'
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return "float('nan')"
    if (!Number.isFinite(value)) return value > 0 ? "float('inf')" : "(-float('inf'))"
    return value < 0 || Object.is(value, -0) ? `(${value})` : String(value)
  }
  if (typeof value === 'string') {
    // Inside a list or mapping a string is data: JSON's string escapes are all Python's too.
    if (nested) return JSON.stringify(value)
    throw unsafe(
      `${what} is text in Python code outside a string literal, where it would run as code`,
      `quote it (x = "${what}"), or read it from state in the code (state["…"])`,
    )
  }
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, what, true)).join(', ')}]`
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${literal(v, what, true)}`)
    return `{${entries.join(', ')}}`
  }
  throw unsafe(`${what} is a ${typeof value} that has no Python literal`, 'pass it through state instead')
}

function unsafe(message: string, hint: string): TeaError {
  return new TeaError('CODE_TEMPLATE_UNSAFE', message, { hint })
}

function textOf(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v))
}

/** The `{{ … }}` around offset `at`, for messages. */
function exprAt(source: string, at: number): string {
  const open = source.lastIndexOf('{{', at)
  const close = source.indexOf('}}', at)
  return open === -1 || close === -1 ? '{{ }}' : source.slice(open, close + 2)
}

/**
 * Where each offset of `source` stands in Python's lexical terms: a function from offset to place, from the
 * change points of one pass. Template tags (`{{ }}`, `{% %}`, `{# #}`) are skipped whole when `tags` is set
 * (they are not Python), so an offset inside one has the place of the tag's start.
 */
export function pythonPlaces(source: string, tags: boolean): (offset: number) => Place {
  const CODE: Place = { kind: 'code' }
  const COMMENT: Place = { kind: 'comment' }
  const starts: number[] = [0]
  const places: Place[] = [CODE]
  const mark = (at: number, p: Place): void => {
    if (places[places.length - 1] === p) return
    starts.push(at)
    places.push(p)
  }
  // Open f-string fields: the string each returns to, and how many `{` deep its code is.
  const fields: { string: Place; depth: number }[] = []
  let place: Place = CODE
  let i = 0
  const n = source.length
  while (i < n) {
    const c = source[i]!
    if (tags && c === '{' && (source[i + 1] === '{' || source[i + 1] === '%' || source[i + 1] === '#')) {
      i = tagEnd(source, i)
      continue
    }
    if (place.kind === 'comment') {
      if (c === '\n' || c === '\r') mark(i, (place = CODE))
      i++
      continue
    }
    if (place.kind === 'string') {
      const s = place
      if (c === '\\') {
        i += 2
        continue
      }
      if (s.f && c === '{') {
        if (source[i + 1] === '{') {
          i += 2
          continue
        }
        fields.push({ string: s, depth: 0 })
        mark(i + 1, (place = CODE))
        i++
        continue
      }
      if (!s.triple && (c === '\n' || c === '\r')) {
        mark(i, (place = CODE)) // unterminated: Python refuses the code; nothing of ours runs
        i++
        continue
      }
      if (c === s.quote && (!s.triple || (source[i + 1] === c && source[i + 2] === c))) {
        i += s.triple ? 3 : 1
        mark(i, (place = CODE))
        continue
      }
      i++
      continue
    }
    // code
    if (c === '#') {
      mark(i, (place = COMMENT))
      i++
      continue
    }
    const field = fields[fields.length - 1]
    if (field && (c === '{' || c === '[' || c === '(')) field.depth++
    else if (field && (c === '}' || c === ']' || c === ')')) {
      if (c === '}' && field.depth === 0) {
        fields.pop()
        mark(i, (place = field.string))
        i++
        continue
      }
      field.depth--
    }
    const str = stringStart(source, i)
    if (str) {
      i = str.body
      mark(i, (place = str.place))
      continue
    }
    i++
  }
  return (offset) => {
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return places[lo]!
  }
}

/** A string literal starting at `i` (its prefix letters, then quotes): its place and where its body begins. */
function stringStart(source: string, i: number): { place: Place; body: number } | undefined {
  let j = i
  // A prefix is at most two letters, and only where no identifier runs into it.
  if (i > 0 && /[A-Za-z0-9_]/.test(source[i - 1]!)) return undefined
  while (j - i < 2 && /[rRbBfFuU]/.test(source[j] ?? '')) j++
  const q = source[j]
  if (q !== '"' && q !== "'") return undefined
  const prefix = source.slice(i, j).toLowerCase()
  if (!/^(|r|u|b|f|br|rb|fr|rf)$/.test(prefix)) return undefined
  const triple = source[j + 1] === q && source[j + 2] === q
  return {
    place: { kind: 'string', quote: q, triple, raw: prefix.includes('r'), bytes: prefix.includes('b'), f: prefix.includes('f') },
    body: j + (triple ? 3 : 1),
  }
}

/** The offset just past the template tag that starts at `i` (quotes inside `{{ }}` and `{% %}` honoured). */
function tagEnd(source: string, i: number): number {
  const kind = source[i + 1]
  if (kind === '#') {
    const close = source.indexOf('#}', i + 2)
    return close === -1 ? source.length : close + 2
  }
  const closer = kind === '{' ? '}}' : '%}'
  let quote = ''
  for (let j = i + 2; j < source.length; j++) {
    const c = source[j]!
    if (quote) {
      if (c === '\\') j++
      else if (c === quote) quote = ''
    } else if (c === '"' || c === "'") quote = c
    else if (c === closer[0] && source[j + 1] === closer[1]) return j + 2
  }
  return source.length
}
