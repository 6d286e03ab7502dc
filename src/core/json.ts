/**
 * The one way JSON text from outside enters tea: HTTP bodies, `-i` and `--input-file`, AOF messages and task
 * files, NATS entries and events, cassette lines, model replies. `JSON.parse` itself copes with any depth, but what
 * walks the value next does not: msgpackr, structured clone, the template engine and state merging all recurse, and
 * a value nested a few thousand deep overflows the stack wherever it lands (one 3 KB request took `tea serve` down
 * from inside an lmdb callback). So the depth is read first, in one pass over the text that honours strings, and
 * a value nested deeper than any agent's data (`JSON_MAX_DEPTH`) is a coded error before anything is parsed.
 *
 * `checkDepth` does the same for values that arrive already decoded (YAML, msgpack, a worker's structured clone),
 * without recursion.
 */

import { type ErrorCode, TeaError } from './errors.ts'

/** Deeper than any agent's state, model reply or task needs; far inside what every recursive walker survives. */
export const JSON_MAX_DEPTH = 128

export interface JsonLimits {
  /** Nesting depth allowed (default JSON_MAX_DEPTH). */
  maxDepth?: number
  /** Characters of text allowed (default: no limit beyond the caller's own). */
  maxBytes?: number
  /** The code for text that is not JSON at all (default INVALID_INPUT). */
  invalid?: ErrorCode
  /** A one-line fix for text that is not JSON. */
  hint?: string
}

/**
 * `text` parsed, or a TeaError: INPUT_TOO_LARGE over `maxBytes`, INPUT_TOO_DEEP past `maxDepth`, and `invalid`
 * (INVALID_INPUT by default) when it is not JSON. `what` names the text in the message ("the request body").
 */
export function parseJson(text: string, what: string, limits: JsonLimits = {}): unknown {
  if (limits.maxBytes !== undefined && text.length > limits.maxBytes) {
    throw new TeaError('INPUT_TOO_LARGE', `${what} is larger than ${limits.maxBytes} bytes`, { details: { limit: limits.maxBytes } })
  }
  const maxDepth = limits.maxDepth ?? JSON_MAX_DEPTH
  if (jsonDepth(text, maxDepth) > maxDepth) throw tooDeep(what, maxDepth)
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new TeaError(limits.invalid ?? 'INVALID_INPUT', `${what} is not valid JSON: ${(e as Error).message}`, {
      ...(limits.hint && { hint: limits.hint }),
    })
  }
}

/**
 * `text` parsed, or undefined when it is not JSON or nests deeper than JSON_MAX_DEPTH: for readers that treat a
 * torn or foreign record as absent (AOF's task files, run artifacts and events, NATS entries).
 */
export function parseJsonOrUndefined(text: string): unknown {
  if (jsonDepth(text, JSON_MAX_DEPTH) > JSON_MAX_DEPTH) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * `text` as JSON when it parses (`--set n=3` a number, `tags=["a"]` a list), else the text itself; too deep is
 * still an error, not text.
 */
export function jsonOrText(text: string, what: string): unknown {
  if (jsonDepth(text, JSON_MAX_DEPTH) > JSON_MAX_DEPTH) throw tooDeep(what, JSON_MAX_DEPTH)
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * How deep brackets nest in JSON text (quotes and escapes honoured), stopping as soon as it passes `stopAt`. Text
 * that is not JSON gets a number all the same; `JSON.parse` reports what is wrong with it.
 */
export function jsonDepth(text: string, stopAt = Number.POSITIVE_INFINITY): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (++depth > max && (max = depth) > stopAt) return max
    } else if ((c === 125 || c === 93) && depth > 0) depth--
  }
  return max
}

/** Throws INPUT_TOO_DEEP when arrays and objects in `value` nest deeper than `maxDepth`. Iterative: any depth is safe. */
export function checkDepth(value: unknown, what: string, maxDepth = JSON_MAX_DEPTH, code: ErrorCode = 'INPUT_TOO_DEEP'): void {
  if (valueDepth(value, maxDepth) > maxDepth) throw tooDeep(what, maxDepth, code)
}

/** How deep arrays and objects nest in `value`, stopping once past `stopAt`; shared objects are walked once. */
export function valueDepth(value: unknown, stopAt = Number.POSITIVE_INFINITY): number {
  if (typeof value !== 'object' || value === null) return 0
  // Most values are one level of scalars (a node's update): measured without a walk's stack and set, since the
  // engine asks this of every update.
  if (!Array.isArray(value) && !ArrayBuffer.isView(value)) {
    let flat = true
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k]
      if (typeof v === 'object' && v !== null) {
        flat = false
        break
      }
    }
    if (flat) return 1
  }
  const seen = new Set<object>()
  const stack: [object, number][] = [[value, 1]]
  let max = 0
  while (stack.length) {
    const [v, d] = stack.pop()!
    if (d > max && (max = d) > stopAt) return max
    if (seen.has(v)) continue
    seen.add(v)
    const children = Array.isArray(v) ? v : ArrayBuffer.isView(v) ? [] : Object.values(v)
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, d + 1])
  }
  return max
}

function tooDeep(what: string, maxDepth: number, code: ErrorCode = 'INPUT_TOO_DEEP'): TeaError {
  return new TeaError(code, `${what} nests arrays or objects deeper than ${maxDepth} levels`, {
    details: { limit: maxDepth },
    hint: 'flatten the value: no agent needs data nested this deep',
  })
}
