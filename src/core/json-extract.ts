/**
 * Tolerant JSON extraction for text written by language models: the whole text, else the first fenced code
 * block, else the first balanced `{…}` or `[…]` span (string-aware, so braces inside strings do not count).
 * Small models wrap JSON in prose and fences; we take the first thing that parses rather than fail. Linear in the
 * text: a hostile reply of unclosed brackets costs one pass, and one nested past JSON_MAX_DEPTH levels is refused.
 */

import { JSON_MAX_DEPTH, jsonDepth } from './json.ts'

export type ExtractResult = { ok: true; value: unknown } | { ok: false; reason: string }

export function extractJson(text: string): ExtractResult {
  const trimmed = text.trim()
  if (trimmed === '') return { ok: false, reason: 'the text is empty' }
  // A value nested this deep is no model's answer, and would overflow the stack of whatever walks it next.
  if (jsonDepth(trimmed, MAX_DEPTH) > MAX_DEPTH) return { ok: false, reason: `brackets nested deeper than ${MAX_DEPTH} levels` }
  const direct = tryParse(trimmed)
  if (direct.ok) return direct
  for (const fence of fencedBlocks(trimmed)) {
    const r = tryParse(fence)
    if (r.ok) return r
  }
  let attempts = 0
  for (const [start, end] of balancedSpans(trimmed, MAX_ATTEMPTS)) {
    if (++attempts > MAX_ATTEMPTS) break
    const r = tryParse(trimmed.slice(start, end + 1))
    if (r.ok) return r
  }
  return { ok: false, reason: 'no JSON object or array found in the text' }
}

const MAX_DEPTH = JSON_MAX_DEPTH

/** Candidate spans tried at most: enough for any real reply, and a bound on hostile ones. */
const MAX_ATTEMPTS = 200

function tryParse(s: string): ExtractResult {
  try {
    return { ok: true, value: JSON.parse(s) }
  } catch (e) {
    return { ok: false, reason: (e as Error).message }
  }
}

function* fencedBlocks(s: string): Generator<string> {
  const re = /```[a-zA-Z0-9_-]*[ \t]*\r?\n([\s\S]*?)```/g
  for (let m = re.exec(s); m !== null; m = re.exec(s)) yield m[1]!.trim()
}

/**
 * Every balanced `{…}` and `[…]` span, by where it opens, found in one pass from the first opener: quotes and
 * escapes are honoured, and a closer that does not match drops everything open (no span can contain it). Linear
 * in the text, however many brackets a hostile reply opens and never closes; with `limit`, the scan stops once
 * the first `limit` spans (by where they open) are certain.
 */
export function balancedSpans(s: string, limit = Number.POSITIVE_INFINITY): Array<[number, number]> {
  const spans: Array<[number, number]> = []
  const open: number[] = []
  let inString = false
  for (let i = s.search(/[[{]/); i !== -1 && i < s.length; i++) {
    const c = s[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = open.length > 0
    else if (c === '{' || c === '[') open.push(i)
    else if (c === '}' || c === ']') {
      const at = open.pop()
      if (at === undefined) continue
      if (s[at] !== (c === '}' ? '{' : '[')) open.length = 0
      else {
        spans.push([at, i])
        // With nothing open, no span found later can start earlier: the first `limit` are known.
        if (spans.length >= limit && open.length === 0) break
      }
    }
  }
  return spans.sort((a, b) => a[0] - b[0])
}
