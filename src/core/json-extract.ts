/**
 * Tolerant JSON extraction for text written by language models: the whole text, else the first fenced code
 * block, else the first balanced `{…}` or `[…]` span (string-aware, so braces inside strings do not count).
 * Small models wrap JSON in prose and fences; we take the first thing that parses rather than fail.
 */

export type ExtractResult = { ok: true; value: unknown } | { ok: false; reason: string }

export function extractJson(text: string): ExtractResult {
  const trimmed = text.trim()
  if (trimmed === '') return { ok: false, reason: 'the text is empty' }
  const direct = tryParse(trimmed)
  if (direct.ok) return direct
  for (const fence of fencedBlocks(trimmed)) {
    const r = tryParse(fence)
    if (r.ok) return r
  }
  for (let start = firstOpener(trimmed, 0); start !== -1; start = firstOpener(trimmed, start + 1)) {
    const end = balancedEnd(trimmed, start)
    if (end === -1) continue
    const r = tryParse(trimmed.slice(start, end + 1))
    if (r.ok) return r
  }
  return { ok: false, reason: 'no JSON object or array found in the text' }
}

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

function firstOpener(s: string, from: number): number {
  for (let i = from; i < s.length; i++) if (s[i] === '{' || s[i] === '[') return i
  return -1
}

/** Index of the bracket closing the one at `start`, or -1. Quotes and escapes are honoured. */
function balancedEnd(s: string, start: number): number {
  const stack: string[] = []
  let inString = false
  for (let i = start; i < s.length; i++) {
    const c = s[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === '{') stack.push('}')
    else if (c === '[') stack.push(']')
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1
      if (stack.length === 0) return i
    }
  }
  return -1
}
