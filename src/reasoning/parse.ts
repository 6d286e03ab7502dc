/**
 * Reading reasoning out of model replies (AC5). Small local models (1–3 B parameters) wrap JSON in prose and code
 * fences, cut it off, and mix formats, so each reader takes what a person reading the reply would take:
 *
 * - JSON first: the whole reply, a fenced block, or the first balanced object in prose (core/json-extract.ts),
 *   with the key spellings models use (`reasoning` for `thinking`, `tool` for `action`, …).
 * - A reply cut off mid-JSON keeps the members that were complete: `{"answer": 42, "thinking": "and th` gives
 *   42. A value the cut may have shortened — a number or word at the very end — does not count, and neither does a
 *   string without its closing quote, except as partial thinking.
 * - Then text: `<thinking>…</thinking>` (or `<think>`) and `Answer:` / `<answer>` for chain of thought; TEA's
 *   `Thought: / Action: / Action Input: / Final Answer:` lines for ReAct; numbered or bulleted lines for a
 *   decomposition; PASS / FAIL for a verdict.
 *
 * Every reader is linear in the reply and throws nothing but REASONING_PARSE_ERROR, which carries the whole reply
 * in `details.raw` and an excerpt in its message.
 */

import { TeaError } from '../core/errors.ts'
import { balancedSpans, extractJson } from '../core/json-extract.ts'
import { isPlainObject } from '../core/util.ts'

export interface CotOutput {
  thinking: string
  answer: unknown
}

export interface ReactStep {
  thought: string
  action: string
  action_input: unknown
  /** Set when the action is terminal: the final answer. */
  answer?: unknown
}

export interface Verdict {
  valid: boolean
  score?: number
  feedback: string
  suggestions: string[]
}

const THINKING_KEYS = ['thinking', 'reasoning', 'thought', 'thoughts', 'rationale']
const ANSWER_KEYS = ['answer', 'final_answer', 'result']
const ACTION_KEYS = ['action', 'tool', 'tool_name']
const INPUT_KEYS = ['action_input', 'input', 'args', 'arguments', 'parameters']
const VERDICT_KEYS = ['valid', 'pass', 'passed', 'ok', 'is_valid']
const FEEDBACK_KEYS = ['feedback', 'critique', 'reason', 'explanation']
const LIST_KEYS = ['sub_problems', 'subproblems', 'subtasks', 'steps', 'problems']
const ITEM_TEXT_KEYS = ['description', 'problem', 'question', 'text', 'task']
/** List items read at most from a decomposition written as lines. */
const MAX_ITEMS = 1000

/** Chain of thought: `{thinking, answer}` as JSON, else from `<thinking>` and `Answer:` delimiters. */
export function parseCot(raw: string): CotOutput {
  return guarded(raw, () => {
    const object = findObject(raw, ANSWER_KEYS)
    if (object) {
      const thinking = first(object, THINKING_KEYS)
      return { thinking: thinking === undefined ? '' : text(thinking), answer: first(object, ANSWER_KEYS) }
    }
    const delimited = cotDelimiters(raw)
    if (delimited) return delimited
    throw parseError('no answer in it: neither JSON with an "answer" nor an "Answer:" line', raw)
  })
}

/** One ReAct step: `{thought, action, action_input}` as JSON, else TEA's `Thought:` / `Action:` lines. */
export function parseReactStep(raw: string): ReactStep {
  return guarded(raw, () => {
    const object = findObject(raw, ACTION_KEYS)
    const step = object ? jsonStep(object, raw) : textStep(raw)
    if (!step) throw parseError('no step in it: neither JSON with an "action" nor an "Action:" line', raw)
    if (isTerminalAction(step.action) && step.answer === undefined) step.answer = finalAnswer(step.action_input)
    return step
  })
}

/** `finish`, `final_answer`, `Final Answer`, … in any case and spelling. */
export function isTerminalAction(action: string): boolean {
  const a = action.toLowerCase().replace(/[\s_-]+/g, '')
  return a === 'finish' || a === 'finalanswer'
}

/** Sub-problems: a JSON list (bare or under `sub_problems` and friends) of strings or objects, else list lines. */
export function parseDecomposition(raw: string): string[] {
  return guarded(raw, () => {
    const json = extractJson(raw)
    if (json.ok) {
      const list = Array.isArray(json.value) ? json.value : isPlainObject(json.value) ? first(json.value, LIST_KEYS) : undefined
      if (Array.isArray(list)) {
        const items = list.flatMap((item) => {
          const t = typeof item === 'string' ? item : isPlainObject(item) ? first(item, ITEM_TEXT_KEYS) : undefined
          return typeof t === 'string' && t.trim() ? [t.trim()] : []
        })
        if (items.length > 0) return items
      }
    }
    const lines: string[] = []
    const item = /^[ \t]*(?:\d{1,3}[.):]|[-*\u2022])[ \t]+(.+)$/gm // \u2022 is •: the bundle stays ASCII
    for (let m = item.exec(raw); m !== null && lines.length < MAX_ITEMS; m = item.exec(raw)) if (m[1]!.trim()) lines.push(m[1]!.trim())
    if (lines.length > 0) return lines
    throw parseError('no sub-problems in it: neither a JSON list nor numbered or bulleted lines', raw)
  })
}

/** A judgement: `{valid|pass|…: boolean, score?, feedback?, suggestions?}`, else PASS / FAIL at the start. */
export function parseVerdict(raw: string): Verdict {
  return guarded(raw, () => {
    const object = findObject(raw, VERDICT_KEYS)
    if (object) {
      const verdict = first(object, VERDICT_KEYS)
      const valid = typeof verdict === 'boolean' ? verdict : /^(true|yes|pass(ed)?|valid)$/i.test(String(verdict).trim())
      const out: Verdict = { valid, feedback: text(first(object, FEEDBACK_KEYS) ?? ''), suggestions: strings(object.suggestions) }
      const score = object.score
      if (typeof score === 'number' && Number.isFinite(score)) out.score = score
      return out
    }
    const m = /^\W*(pass(?:ed)?|valid|yes|fail(?:ed)?|invalid|no)\b[\s:.,-]*([\s\S]*)$/i.exec(raw.trimStart().slice(0, 100_000))
    if (m) return { valid: /^(pass|valid|yes)/i.test(m[1]!), feedback: m[2]!.trim(), suggestions: [] }
    throw parseError('no verdict in it: neither JSON with "valid" nor PASS / FAIL', raw)
  })
}

// ---------------------------------------------------------------------------------------------------------------

function guarded<T>(raw: unknown, read: () => T): T {
  if (typeof raw !== 'string') throw parseError(`the reply is not text but ${typeof raw}`, String(raw))
  try {
    return read()
  } catch (e) {
    if (e instanceof TeaError) throw e
    throw parseError(`it could not be read (${(e as Error).message})`, raw)
  }
}

const EXCERPT = 300

function parseError(why: string, raw: string): TeaError {
  const excerpt = raw.length > EXCERPT ? `${JSON.stringify(raw.slice(0, EXCERPT))}… (${raw.length} characters)` : JSON.stringify(raw)
  return new TeaError('REASONING_PARSE_ERROR', `the model's reply holds ${why}: ${excerpt}`, {
    details: { raw },
    hint: 'a larger model, a lower temperature or structured output (structured: true) makes replies easier to read',
  })
}

function first(o: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const k of keys) if (Object.hasOwn(o, k)) return o[k]
  const lower = new Map(Object.keys(o).map((k) => [k.toLowerCase(), k]))
  for (const k of keys) {
    const found = lower.get(k)
    if (found !== undefined) return o[found]
  }
  return undefined
}

function has(o: Record<string, unknown>, keys: readonly string[]): boolean {
  return first(o, keys) !== undefined || keys.some((k) => Object.hasOwn(o, k))
}

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v))

function strings(v: unknown): string[] {
  if (v === undefined || v === null) return []
  return (Array.isArray(v) ? v : [v]).map(text)
}

/** The first JSON object in the reply that has one of `keys`: whole, fenced, in prose, or cut off at the end. */
function findObject(raw: string, keys: readonly string[]): Record<string, unknown> | undefined {
  const json = extractJson(raw)
  if (json.ok) {
    if (isPlainObject(json.value) && has(json.value, keys)) return json.value
    // The first JSON value was something else (an example, a list): look at the other objects.
    if (!isPlainObject(json.value) || !has(json.value, keys)) {
      let tried = 0
      for (const [start, end] of balancedSpans(raw, 50)) {
        if (raw[start] !== '{' || ++tried > 50) continue
        const r = extractJson(raw.slice(start, end + 1))
        if (r.ok && isPlainObject(r.value) && has(r.value, keys)) return r.value
      }
    }
  }
  const cut = truncatedObject(raw)
  return cut && has(cut, keys) ? cut : undefined
}

/**
 * The complete members of a JSON object the reply cuts off: parsed member by member from the first `{` that
 * starts `{"`. Strings cut off are kept, marked, so a cut-off thinking can still be read; a cut-off answer cannot.
 */
function truncatedObject(raw: string): Record<string, unknown> | undefined {
  const start = raw.search(/\{\s*"/)
  if (start === -1) return undefined
  const out: Record<string, unknown> = {}
  let i = start + 1
  let any = false
  for (;;) {
    i = skipSpace(raw, i)
    if (raw[i] !== '"') break
    const key = stringEnd(raw, i)
    if (key === -1) break
    let name: unknown
    try {
      name = JSON.parse(raw.slice(i, key + 1))
    } catch {
      break
    }
    i = skipSpace(raw, key + 1)
    if (raw[i] !== ':') break
    i = skipSpace(raw, i + 1)
    const end = valueEnd(raw, i)
    if (end === -1) {
      // Cut inside this value: only a string is worth keeping, as partial text, and never as the answer.
      if (raw[i] === '"' && typeof name === 'string' && THINKING_KEYS.includes(name)) {
        out[name] = raw.slice(i + 1).replace(/\\(.)/g, '$1')
        any = true
      }
      break
    }
    const after = skipSpace(raw, end + 1)
    // A bare number or word right at the end may have been cut short.
    if (after >= raw.length && raw[i] !== '"' && raw[i] !== '{' && raw[i] !== '[') break
    try {
      if (typeof name === 'string') out[name] = JSON.parse(raw.slice(i, end + 1))
      any = true
    } catch {
      break
    }
    if (raw[after] === ',') i = after + 1
    else break
  }
  return any ? out : undefined
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i]!)) i++
  return i
}

function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === '\\') j++
    else if (s[j] === '"') return j
  }
  return -1
}

/** The last index of the JSON value at `i`, or -1 when the text ends inside it. */
function valueEnd(s: string, i: number): number {
  const c = s[i]
  if (c === '"') return stringEnd(s, i)
  if (c === '{' || c === '[') {
    const depth: string[] = []
    for (let j = i; j < s.length; j++) {
      const d = s[j]
      if (d === '"') {
        j = stringEnd(s, j)
        if (j === -1) return -1
      } else if (d === '{') depth.push('}')
      else if (d === '[') depth.push(']')
      else if (d === '}' || d === ']') {
        if (depth.pop() !== d) return -1
        if (depth.length === 0) return j
      }
    }
    return -1
  }
  let j = i
  while (j < s.length && !/[\s,}\]]/.test(s[j]!)) j++
  return j === i ? -1 : j - 1
}

/** `<thinking>…</thinking>` (or `<think>`, or a `Thinking:` label) and `Answer:` / `<answer>…</answer>`. */
function cotDelimiters(raw: string): CotOutput | undefined {
  let thinking = ''
  let rest = raw
  const tag = /<(thinking|think)>/i.exec(raw)
  if (tag) {
    const close = raw.toLowerCase().indexOf(`</${tag[1]!.toLowerCase()}>`, tag.index)
    const from = tag.index + tag[0].length
    if (close === -1) {
      const answerAt = answerMarker(raw.slice(from))
      thinking = (answerAt ? raw.slice(from, from + answerAt.index) : raw.slice(from)).trim()
      rest = answerAt ? raw.slice(from + answerAt.index) : ''
    } else {
      thinking = raw.slice(from, close).trim()
      rest = raw.slice(close + tag[1]!.length + 3)
    }
  } else {
    const label = /^[ \t]*(?:thinking|reasoning|thoughts?)[ \t]*:[ \t]*/im.exec(raw)
    const answerAt = answerMarker(raw)
    if (label && answerAt && label.index < answerAt.index) {
      thinking = raw.slice(label.index + label[0].length, answerAt.index).trim()
      rest = raw.slice(answerAt.index)
    }
  }
  const answerTag = /<answer>([\s\S]*?)(?:<\/answer>|$)/i.exec(rest)
  if (answerTag) return { thinking, answer: answerValue(answerTag[1]!) }
  const marker = answerMarker(rest)
  if (marker) return { thinking, answer: answerValue(rest.slice(marker.index + marker.length)) }
  // Thinking in tags and then plain text: the text is the answer.
  if (tag && rest.trim()) return { thinking, answer: answerValue(rest) }
  return undefined
}

function answerMarker(s: string): { index: number; length: number } | undefined {
  const m = /^[ \t>*#_]*(?:final[ \t]+answer|answer)[ \t*_]*[:\uff1a][ \t*_]*/im.exec(s)
  return m ? { index: m.index, length: m[0].length } : undefined
}

/** An answer's text as a value: JSON when it is JSON (`42`, `{"a": 1}`), else the trimmed text. */
function answerValue(s: string): unknown {
  const t = s
    .trim()
    .replace(/^```[a-zA-Z0-9_-]*[ \t]*\r?\n?/, '')
    .replace(/\r?\n?```$/, '')
    .trim()
  if (t === '') return ''
  if (/^[-\d[{"]|^(true|false|null)$/.test(t)) {
    try {
      return JSON.parse(t)
    } catch {
      /* text, then */
    }
  }
  return t
}

function jsonStep(o: Record<string, unknown>, raw: string): ReactStep {
  const action = first(o, ACTION_KEYS)
  if (typeof action !== 'string' || !action.trim())
    throw parseError(`an action that is not a name (${JSON.stringify(action)?.slice(0, 80)})`, raw)
  const thought = first(o, THINKING_KEYS)
  const step: ReactStep = { thought: text(thought), action: action.trim(), action_input: actionInput(first(o, INPUT_KEYS), raw) }
  const answer = first(o, ANSWER_KEYS)
  if (answer !== undefined && isTerminalAction(step.action)) step.answer = answer
  return step
}

/** An action input: an object, a string (parsed when it holds a JSON object), or nothing. */
function actionInput(input: unknown, raw: string): unknown {
  if (input === undefined || input === null) return {}
  if (isPlainObject(input)) return input
  if (typeof input === 'string') {
    const t = input.trim()
    if (t.startsWith('{')) {
      const r = extractJson(t)
      if (r.ok && isPlainObject(r.value)) return r.value
    }
    return input
  }
  throw parseError(`an action_input that is neither an object nor text (${JSON.stringify(input)?.slice(0, 80)})`, raw)
}

/** TEA's text protocol: `Thought:`, then `Action:` and `Action Input:`, or `Final Answer:`. */
function textStep(raw: string): ReactStep | undefined {
  const final = /^[ \t*]*final[ \t]+answer[ \t*]*:[ \t]*/im.exec(raw)
  const action = /^[ \t*]*action[ \t*]*:[ \t]*(.*)$/im.exec(raw)
  const thoughtAt = /^[ \t*]*thought[ \t*]*:[ \t]*/im.exec(raw)
  const ends = [final?.index, action?.index].filter((x): x is number => x !== undefined)
  const thought = thoughtAt
    ? raw.slice(thoughtAt.index + thoughtAt[0].length, Math.min(raw.length, ...ends.filter((e) => e > thoughtAt.index))).trim()
    : ''
  if (final && (!action || final.index < action.index)) {
    const answer = answerValue(raw.slice(final.index + final[0].length))
    return { thought, action: 'finish', action_input: { answer }, answer }
  }
  if (!action) return undefined
  const name = action[1]!
    .trim()
    .replace(/^[`'"]+|[`'"]+$/g, '')
    .trim()
  if (!name) return undefined
  const inputAt = /^[ \t*]*action[ \t_]*input[ \t*]*:[ \t]*/im.exec(raw.slice(action.index + action[0].length))
  let input: unknown = {}
  if (inputAt) {
    const body = raw.slice(action.index + action[0].length + inputAt.index + inputAt[0].length).trim()
    const value = answerValue(body.split(/^[ \t*]*(?:observation|thought)[ \t*]*:/im)[0]!)
    input = actionInput(value, raw)
  }
  return { thought, action: name, action_input: input }
}

/** The answer a terminal step carries: `answer` / `final_answer` in its input, else the input itself. */
function finalAnswer(input: unknown): unknown {
  if (isPlainObject(input)) {
    const a = first(input, ['answer', 'final_answer'])
    if (a !== undefined) return a
    return Object.keys(input).length === 0 ? null : input
  }
  return input
}
