/**
 * The reply readers under 25,000 generated replies (seeded, so a failure repeats): valid JSON and delimiter
 * replies, wrapped in prose and code fences, cut off at random points, with unicode and random bytes mixed in.
 * Every call returns a well-formed value or throws REASONING_PARSE_ERROR carrying the reply; never anything else.
 * And what a user would read from a wrapped reply is what the reader reads.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { parseCot, parseDecomposition, parseReactStep, parseVerdict } from '../../src/reasoning/parse.ts'
import { rng } from '../support/rng.ts'

// The suite reads 25,000 (6,700 and 2,600 read per reader, the rest refused); for a longer hunt:
// TEA_FUZZ_REPLIES=1000000 npx tsx test/reasoning/parse-fuzz.test.ts
const REPLIES = Number(process.env.TEA_FUZZ_REPLIES ?? 25_000)
const random = rng(4_2026)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
const int = (n: number) => Math.floor(random() * n)

const WORDS = [
  'step',
  'add',
  '42',
  'Paris',
  '思考',
  'ünï',
  '🚀',
  'the',
  '"quoted"',
  'a\\b',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  'null',
  'true',
  '\n',
  '<thinking>',
  '</thinking>',
  'Answer:',
  'Action:',
]
const text = (n: number) => Array.from({ length: int(n) + 1 }, () => pick(WORDS)).join(pick([' ', '', '\n']))
const plainText = (n: number) =>
  Array.from({ length: int(n) + 1 }, () => pick(['step', 'add', 'Paris', '思考', 'ünï', '🚀', 'the', 'café']))
    .join(' ')
    .trim()

function value(depth = 0): unknown {
  switch (int(depth > 2 ? 4 : 6)) {
    case 0:
      return int(1000) - 500
    case 1:
      return plainText(4)
    case 2:
      return random() < 0.5
    case 3:
      return null
    case 4:
      return Array.from({ length: int(3) }, () => value(depth + 1))
    default:
      return Object.fromEntries(Array.from({ length: int(3) }, (_, i) => [`k${i}`, value(depth + 1)]))
  }
}

function wrap(core: string): string {
  switch (int(5)) {
    case 0:
      return core
    case 1:
      return `Sure! ${plainText(5)}.\n${core}\n${plainText(3)}`
    case 2:
      return `\`\`\`json\n${core}\n\`\`\``
    case 3:
      return `${plainText(3)}:\n\`\`\`\n${core}\n\`\`\`\nDone.`
    default:
      return `  ${core}  `
  }
}

/** A reply a model might write: mostly well-formed, then damaged one way or another. */
function reply(): string {
  const kind = int(7)
  let r: string
  if (kind === 0) r = wrap(JSON.stringify({ thinking: plainText(8), answer: value() }))
  else if (kind === 1) r = `<thinking>${text(10)}</thinking>\nAnswer: ${text(3)}`
  else if (kind === 2)
    r = wrap(JSON.stringify({ thought: plainText(6), action: pick(['calc.add', 'finish', 'web.scrape', 7]), action_input: value() }))
  else if (kind === 3) r = `Thought: ${text(6)}\nAction: ${pick(['calc.add', 'finish', ''])}\nAction Input: ${JSON.stringify(value())}`
  else if (kind === 5)
    r =
      random() < 0.5
        ? wrap(JSON.stringify({ valid: random() < 0.5, score: random(), feedback: plainText(5) }))
        : `${pick(['PASS', 'FAIL', 'maybe'])}: ${text(5)}`
  else if (kind === 4) r = Array.from({ length: int(5) }, (_, i) => `${i + 1}. ${text(4)}`).join('\n')
  else r = text(30)
  switch (int(4)) {
    case 0:
      return r.slice(0, int(r.length + 1)) // cut off anywhere
    case 1: {
      const at = int(r.length + 1)
      return r.slice(0, at) + String.fromCharCode(int(0x10000)) + r.slice(at) // a random UTF-16 unit
    }
    default:
      return r
  }
}

const READERS = [
  ['parseCot', parseCot, (v: any) => typeof v.thinking === 'string' && 'answer' in v],
  ['parseReactStep', parseReactStep, (v: any) => typeof v.thought === 'string' && typeof v.action === 'string' && v.action.length > 0],
  [
    'parseDecomposition',
    parseDecomposition,
    (v: any) => Array.isArray(v) && v.length > 0 && v.every((x: unknown) => typeof x === 'string' && x),
  ],
  [
    'parseVerdict',
    parseVerdict,
    (v: any) => typeof v.valid === 'boolean' && typeof v.feedback === 'string' && Array.isArray(v.suggestions),
  ],
] as const

test(`${REPLIES.toLocaleString('en')} generated replies: a well-formed value or REASONING_PARSE_ERROR with the reply, never a crash`, () => {
  const outcomes: Record<string, { read: number; refused: number }> = {}
  for (let i = 0; i < REPLIES; i++) {
    const raw = reply()
    for (const [name, read, wellFormed] of READERS) {
      const o = (outcomes[name] ??= { read: 0, refused: 0 })
      try {
        const v = read(raw)
        if (!wellFormed(v)) assert.unreachable(`${name} returned ${JSON.stringify(v)} for ${JSON.stringify(raw)}`)
        o.read++
      } catch (e) {
        if (!isTeaError(e, 'REASONING_PARSE_ERROR') || e.details?.raw !== raw) {
          assert.unreachable(`${name} threw ${String(e)} for ${JSON.stringify(raw)}`)
        }
        o.refused++
      }
    }
  }
  // The generator reaches both outcomes for every reader (a fuzzer that only ever fails proves little).
  for (const [name, o] of Object.entries(outcomes))
    assert.ok(o.read > REPLIES / 100 && o.refused > REPLIES / 100, `${name}: ${JSON.stringify(o)}`)
})

test('round trip: a generated chain of thought wrapped in prose or fences reads back as written', () => {
  for (let i = 0; i < 10_000; i++) {
    const thinking = plainText(10)
    const answer = value()
    const raw = wrap(JSON.stringify({ thinking, answer }))
    assert.equal(parseCot(raw), { thinking, answer }, raw)
  }
})

test('round trip: a generated ReAct step reads back as written, in JSON or in the text protocol', () => {
  for (let i = 0; i < 10_000; i++) {
    const thought = plainText(6)
    const action = pick(['calc.add', 'web.scrape', 'memory.store'])
    const action_input = Object.fromEntries(Array.from({ length: int(3) }, (_, k) => [`p${k}`, value(1)]))
    const asJson = random() < 0.5
    const raw = asJson
      ? wrap(JSON.stringify({ thought, action, action_input }))
      : `Thought: ${thought}\nAction: ${action}\nAction Input: ${JSON.stringify(action_input)}`
    assert.equal(parseReactStep(raw), { thought, action, action_input }, raw)
  }
})

test.run()
