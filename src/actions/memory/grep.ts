/**
 * TEA's `memory.grep` over tea's collections: the lines of a collection's documents that contain `pattern` (`like`
 * and `exact`: the text as written; `regex`: a JavaScript regular expression), with TEA's parameters and result
 * shapes (search_actions.py: `{success, matches: [{file_path, content_type, line_number, match_text, context?}],
 * file_count, match_count, pattern, mode, case_sensitive}`, or `{success: false, error, error_type}`). TEA's "memory
 * files" are the documents of one collection (`collection`, default `tea.ltm`, the one ltm.* uses): `file_path` is a
 * document's id, `content_type` its metadata's `content_type` or the extension of its metadata's `path` (else of its
 * id, without vector.index_files' `#n`), `yml` read as `yaml`.
 *
 * Every input is hostile (docs/security.md): the pattern is at most 1,000 characters, `limit` (files) at most 1,000,
 * `context_lines` at most 10 (TEA's MAX_CONTEXT_LINES), at most 1,000 matches are returned.
 *
 * REGEX RULE. A JavaScript regex cannot be interrupted, so a pattern that can backtrack exponentially is refused
 * (validation_error): backreferences and lookarounds (TEA's DuckDB regexp_matches is RE2, which has neither), and a
 * quantifier on a group that holds a quantifier or an alternation (`(a+)+`, `(a|aa)*`). What is left backtracks at
 * worst polynomially: about n^(q+1) steps on a line of n characters for a pattern of q quantifiers (q at most 8).
 * A line is tested with the regex only while that bound stays under 10^7 for the line and 3×10^8 for the whole
 * grep; a line past either is searched with `like` semantics (the pattern as plain text), so one call stays well
 * under a second of CPU whatever the pattern and the documents.
 */

import * as v from 'valibot'
import { errorMessage, isTeaError } from '../../core/errors.ts'
import type { StoredDocument } from '../../store/collections/index.ts'
import { defineAction } from '../types.ts'

const GREP_MODES = ['like', 'regex', 'exact']
const MAX_PATTERN = 1000
const MAX_FILES = 1000
const MAX_MATCHES = 1000
const MAX_CONTEXT_LINES = 10
const MAX_QUANTIFIERS = 8
const LINE_BUDGET = 1e7
const GREP_BUDGET = 3e8
const PAGE = 500

const params = v.object({
  pattern: v.optional(v.pipe(v.unknown(), v.description('The text (or regex) to find; required.'))),
  mode: v.optional(v.pipe(v.unknown(), v.description("'like' (default), 'regex' or 'exact'.")), 'like'),
  file_types: v.optional(v.pipe(v.unknown(), v.description('Only documents of these content types, e.g. [md, yaml].'))),
  paths: v.optional(v.pipe(v.unknown(), v.description('Only documents whose id starts with one of these.'))),
  case_sensitive: v.optional(v.pipe(v.unknown(), v.description('Default true.')), true),
  context_lines: v.optional(v.pipe(v.unknown(), v.description('Lines before and after each match (at most 10).')), 0),
  limit: v.optional(v.pipe(v.unknown(), v.description('The most documents with matches (default 100, at most 1000).')), 100),
  collection: v.optional(v.pipe(v.unknown(), v.description('The collection searched (default `tea.ltm`, the one ltm.* uses).')), 'tea.ltm'),
})

type Failure = { success: false; error: string; error_type: string }

const fail = (error: string, error_type = 'validation_error'): Failure => ({ success: false, error, error_type })

const stringList = (x: unknown): x is string[] => Array.isArray(x) && x.length <= 100 && x.every((s) => typeof s === 'string')

export const memoryGrep = defineAction({
  name: 'memory.grep',
  description:
    "TEA's memory.grep: the lines of a collection's documents containing a pattern (like, exact or regex); returns {success, matches: [{file_path, content_type, line_number, match_text, context?}], file_count, match_count, pattern, mode, case_sensitive}.",
  params,
  async run(p, ctx) {
    const { pattern, mode, case_sensitive: caseSensitive, context_lines: contextLines, limit, collection } = p
    if (typeof mode !== 'string' || !GREP_MODES.includes(mode))
      return fail(`Invalid mode: ${String(mode)}. Must be one of: ${GREP_MODES.join(', ')}`)
    if (typeof pattern !== 'string' || !pattern.trim()) return fail('Pattern cannot be empty')
    if (pattern.length > MAX_PATTERN) return fail(`Pattern is ${pattern.length} characters; at most ${MAX_PATTERN}`)
    if (typeof caseSensitive !== 'boolean') return fail('case_sensitive must be true or false')
    if (!Number.isInteger(contextLines) || (contextLines as number) < 0) return fail('context_lines must be a whole number, 0 or more')
    if (!Number.isInteger(limit) || (limit as number) < 0) return fail('limit must be a whole number, 0 or more')
    if (p.file_types !== undefined && p.file_types !== null && !stringList(p.file_types))
      return fail('file_types must be a list of at most 100 texts')
    if (p.paths !== undefined && p.paths !== null && !stringList(p.paths)) return fail('paths must be a list of at most 100 texts')
    if (typeof collection !== 'string') return fail('collection must be a text')
    let test: LineTest
    try {
      test = lineTest(pattern, mode, caseSensitive)
    } catch (e) {
      return fail(errorMessage(e))
    }
    const types = new Set((p.file_types ?? []).map((t) => normaliseType(t.replace(/^\./, ''))))
    const prefixes = p.paths ?? []
    const context = Math.min(contextLines as number, MAX_CONTEXT_LINES)
    const wanted = Math.min(limit as number, MAX_FILES)
    const matches: Record<string, unknown>[] = []
    let files = 0
    try {
      let after: string | undefined
      scan: while (files < wanted && matches.length < MAX_MATCHES) {
        const page: StoredDocument[] = await ctx.store.collectionPage(collection, after, PAGE)
        for (const doc of page) {
          if (files >= wanted || matches.length >= MAX_MATCHES) break scan
          if (prefixes.length && !prefixes.some((pre) => doc.id.startsWith(pre))) continue
          const contentType = contentTypeOf(doc)
          if (types.size && (contentType === null || !types.has(contentType))) continue
          const found = matchesIn(doc.text, test, context, MAX_MATCHES - matches.length)
          if (found.length === 0) continue
          files++
          for (const m of found) matches.push({ file_path: doc.id, content_type: contentType, ...m })
        }
        if (page.length < PAGE) break
        after = page[page.length - 1]!.id
      }
    } catch (e) {
      if (isTeaError(e, 'COLLECTION_NOT_FOUND') || isTeaError(e, 'DOCUMENT_INVALID')) return fail(errorMessage(e), 'configuration_error')
      return fail(errorMessage(e), 'search_failed')
    }
    return { success: true, matches, file_count: files, match_count: matches.length, pattern, mode, case_sensitive: caseSensitive }
  },
})

type LineTest = (line: string) => boolean

/** The test of one line for a mode; throws (a message for validation_error) for a regex that is refused or invalid. */
function lineTest(pattern: string, mode: string, caseSensitive: boolean): LineTest {
  const needle = caseSensitive ? pattern : pattern.toLowerCase()
  const like: LineTest = (line) => (caseSensitive ? line : line.toLowerCase()).includes(needle)
  if (mode !== 'regex') return like
  const q = quantifiersOf(pattern)
  let re: RegExp
  try {
    re = new RegExp(pattern, caseSensitive ? '' : 'i')
  } catch (e) {
    throw new Error(`Invalid regex pattern: ${errorMessage(e)}`)
  }
  let spent = 0
  return (line) => {
    const cost = line.length ** (q + 1)
    if (cost > LINE_BUDGET || spent + cost > GREP_BUDGET) return like(line)
    spent += cost
    return re.test(line)
  }
}

/**
 * The quantifiers of a pattern (`*`, `+`, `?`, `{…}`); throws for what can backtrack exponentially (the regex rule
 * above): a backreference, a lookaround, a quantified group holding a quantifier or `|`, more than 8 quantifiers.
 */
function quantifiersOf(pattern: string): number {
  const refuse = (why: string): never => {
    throw new Error(`Regex refused: ${why} can make a regular expression run for hours, and tea cannot interrupt one (docs/memory.md)`)
  }
  let q = 0
  const groups: { risky: boolean }[] = []
  let closed: { risky: boolean } | undefined // the group just closed, if the next character may quantify it
  let lastWasQuantifier = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    const quantifier = c === '*' || c === '+' || (c === '?' && !lastWasQuantifier) || (c === '{' && /^\{\d*,?\d*\}/.test(pattern.slice(i)))
    if (quantifier) {
      if (closed?.risky) refuse('a quantifier on a group that holds a quantifier or an alternation, as in (a+)+')
      q++
      for (const g of groups) g.risky = true
      if (c === '{') i = pattern.indexOf('}', i)
      closed = undefined
      lastWasQuantifier = true
      continue
    }
    lastWasQuantifier = false
    closed = undefined
    if (c === '\\') {
      const next = pattern[i + 1] ?? ''
      if (/[1-9]/.test(next) || next === 'k') refuse('a backreference')
      i++
    } else if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++
    } else if (c === '(') {
      if (/^\(\?<?[=!]/.test(pattern.slice(i))) refuse('a lookaround')
      groups.push({ risky: false })
    } else if (c === ')') {
      closed = groups.pop()
      if (closed?.risky) for (const g of groups) g.risky = true
    } else if (c === '|') {
      for (const g of groups) g.risky = true
    }
  }
  if (q > MAX_QUANTIFIERS) refuse(`more than ${MAX_QUANTIFIERS} quantifiers`)
  return q
}

/** TEA's _find_matches_in_content and _extract_context: one entry per line that matches, at most `most`. */
function matchesIn(text: string, test: LineTest, context: number, most: number): Record<string, unknown>[] {
  const lines = text.split('\n')
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < lines.length && out.length < most; i++) {
    if (!test(lines[i]!)) continue
    const entry: Record<string, unknown> = { line_number: i + 1, match_text: lines[i]!.trim() }
    if (context > 0) {
      const start = Math.max(0, i - context)
      const end = Math.min(lines.length, i + context + 1)
      entry.context = {
        before: lines.slice(start, i),
        match: lines[i],
        after: lines.slice(i + 1, end),
        start_line: start + 1,
        end_line: end,
      }
    }
    out.push(entry)
  }
  return out
}

function normaliseType(t: string): string {
  const lower = t.toLowerCase()
  return lower === 'yml' ? 'yaml' : lower
}

function contentTypeOf(doc: StoredDocument): string | null {
  const given = doc.metadata.content_type
  if (typeof given === 'string' && given) return normaliseType(given)
  const from = typeof doc.metadata.path === 'string' ? doc.metadata.path : doc.id.replace(/#\d+$/, '')
  const ext = /\.([A-Za-z0-9]{1,16})$/.exec(from.split('/').pop() ?? '')
  return ext ? normaliseType(ext[1]!) : null
}
