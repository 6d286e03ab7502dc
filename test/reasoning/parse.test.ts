/**
 * Reading reasoning out of model replies (../shared/specs/reasoning-test-design.md AC5, and the parsing scenarios
 * of AC1, AC2, AC4), with the replies small local models really write: prose and fences around JSON, replies cut
 * off, mixed formats, very long ones.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTerminalAction, parseCot, parseDecomposition, parseReactStep, parseVerdict } from '../../src/reasoning/parse.ts'
import { throwsCode } from '../support/expect.ts'
import { cpuMsSync } from '../support/cpu.ts'

test('001.4R-UNIT-001 / 001.4R-UNIT-018 a JSON reply gives thinking and answer', () => {
  assert.equal(parseCot('{"thinking": "Step 1: convert...", "answer": 42}'), { thinking: 'Step 1: convert...', answer: 42 })
})

test('001.4R-UNIT-002 / 001.4R-UNIT-020 <thinking> delimiters and an Answer: line', () => {
  assert.equal(parseCot('<thinking>My reasoning here</thinking>\nAnswer: 42'), { thinking: 'My reasoning here', answer: 42 })
  assert.equal(parseCot('<thinking>My reasoning</thinking>\n<answer>Paris</answer>'), { thinking: 'My reasoning', answer: 'Paris' })
  assert.equal(parseCot('<think>short</think>The answer is plain text.'), { thinking: 'short', answer: 'The answer is plain text.' })
})

test('001.4R-UNIT-003 JSON cut off inside the thinking, before any answer, is an error carrying the raw reply', () => {
  const raw = '{"thinking": "partial...'
  const e = throwsCode(() => parseCot(raw), 'REASONING_PARSE_ERROR', 'partial...')
  assert.is(e.details?.raw, raw)
})

test('a reply cut off after a complete answer keeps it; an answer that may itself be cut does not count', () => {
  assert.equal(parseCot('{"answer": {"city": "Lyon"}, "thinking": "Because the river and th'), {
    thinking: 'Because the river and th',
    answer: { city: 'Lyon' },
  })
  assert.equal(parseCot('{"thinking": "x", "answer": "Paris", "confid'), { thinking: 'x', answer: 'Paris' })
  throwsCode(() => parseCot('{"thinking": "x", "answer": 4'), 'REASONING_PARSE_ERROR') // 4 or 42 or 420?
  throwsCode(() => parseCot('{"thinking": "x", "answer": "Par'), 'REASONING_PARSE_ERROR')
})

test('001.4R-UNIT-019 malformed JSON with valid delimiters falls back to the delimiters', () => {
  assert.equal(parseCot('{"thinking": oops}\n<thinking>careful</thinking>\nAnswer: yes'), { thinking: 'careful', answer: 'yes' })
})

test('001.4R-UNIT-021 random garbage is an error whose message and details carry the raw output', () => {
  const e = throwsCode(() => parseCot('random garbage'), 'REASONING_PARSE_ERROR', 'random garbage')
  assert.is(e.details?.raw, 'random garbage')
})

test('001.4R-UNIT-022 a nested answer is kept as it is', () => {
  assert.equal(parseCot('{"thinking": "...", "answer": {"nested": {"deep": true}}}').answer, { nested: { deep: true } })
})

test('001.4R-UNIT-023 unicode in the thinking is kept', () => {
  assert.is(parseCot('<thinking>思考步骤… ünïcødé 🚀</thinking>\nAnswer: 好').thinking, '思考步骤… ünïcødé 🚀')
  assert.equal(parseCot('{"thinking": "思考步骤", "answer": "答案"}'), { thinking: '思考步骤', answer: '答案' })
})

test('001.4R-UNIT-033 empty thinking is "", not an error', () => {
  assert.equal(parseCot('<thinking></thinking>\nAnswer: 7'), { thinking: '', answer: 7 })
  assert.equal(parseCot('{"answer": 7}'), { thinking: '', answer: 7 })
})

test('001.4R-UNIT-034 multiline thinking keeps every line', () => {
  assert.is(parseCot('<thinking>\nLine1\nLine2\n</thinking>\nAnswer: done').thinking, 'Line1\nLine2')
})

test('small-model replies: prose and fences around JSON, other key names, a Thinking: label', () => {
  assert.equal(parseCot('Sure! Here is my answer:\n```json\n{"reasoning": "6*7", "final_answer": 42}\n```\nHope it helps.'), {
    thinking: '6*7',
    answer: 42,
  })
  assert.equal(parseCot('Thinking: add the two\nAnswer: 5'), { thinking: 'add the two', answer: 5 })
  assert.equal(parseCot('**Final Answer:** Paris'), { thinking: '', answer: 'Paris' })
  // An example object before the real one does not hide it.
  assert.equal(parseCot('Format: {"x": 1}. My reply: {"thinking": "t", "answer": "a"}'), { thinking: 't', answer: 'a' })
  assert.equal(parseCot('{"thinking": "t", "answer": null}'), { thinking: 't', answer: null })
})

test('JSON of the wrong shape for a chain of thought is an error', () => {
  for (const raw of ['[1, 2]', '"just a string"', '{"thinking": "no answer here"}', '', '   '])
    throwsCode(() => parseCot(raw), 'REASONING_PARSE_ERROR')
})

test('001.4R-UNIT-008 a JSON ReAct step gives thought, action and action_input', () => {
  assert.equal(parseReactStep('{"thought": "I need to...", "action": "web.scrape", "action_input": {"url": "https://x.org"}}'), {
    thought: 'I need to...',
    action: 'web.scrape',
    action_input: { url: 'https://x.org' },
  })
})

test('001.4R-UNIT-009 finish and final_answer are terminal in any spelling; the answer comes from the input', () => {
  for (const a of ['finish', 'Finish', 'final_answer', 'FINAL_ANSWER', 'Final Answer', 'final-answer']) assert.ok(isTerminalAction(a), a)
  for (const a of ['web.scrape', 'finished_goods.list', '']) assert.not.ok(isTerminalAction(a), a)
  assert.is(parseReactStep('{"thought": "done", "action": "finish", "action_input": {"answer": 42}}').answer, 42)
  assert.is(parseReactStep('{"thought": "done", "action": "final_answer", "action_input": "Paris"}').answer, 'Paris')
})

test('001.4R-UNIT-012 an action_input of the wrong structure is an error with context, never a crash', () => {
  throwsCode(
    () => parseReactStep('{"thought": "t", "action": "calc.add", "action_input": [1, 2]}'),
    'REASONING_PARSE_ERROR',
    'action_input',
    '[1,2]',
  )
  throwsCode(() => parseReactStep('{"thought": "t", "action": 5, "action_input": {}}'), 'REASONING_PARSE_ERROR', 'not a name')
  throwsCode(() => parseReactStep('{"thought": "t", "action_input": {}}'), 'REASONING_PARSE_ERROR')
})

test("TEA's text protocol, other key names, and action_input given as a JSON string", () => {
  assert.equal(
    parseReactStep('Thought: I should search.\nAction: web.scrape\nAction Input: {"url": "https://x.org"}\nObservation: (to come)'),
    {
      thought: 'I should search.',
      action: 'web.scrape',
      action_input: { url: 'https://x.org' },
    },
  )
  assert.equal(parseReactStep('Thought: easy\nFinal Answer: 42'), {
    thought: 'easy',
    action: 'finish',
    action_input: { answer: 42 },
    answer: 42,
  })
  assert.equal(parseReactStep('{"thought": "t", "tool": "calc.add", "args": "{\\"a\\": 1}"}').action_input, { a: 1 })
  assert.equal(parseReactStep('{"thought": "t", "action": "memory.list"}').action_input, {})
  assert.equal(parseReactStep('Action: `memory.list`').action, 'memory.list')
})

test('001.4R-UNIT-015 a decomposition reply listing 3 sub-problems gives 3 strings, from JSON or from lines', () => {
  const three = ['Find the area', 'Find the height', 'Divide']
  assert.equal(parseDecomposition('{"sub_problems": ["Find the area", "Find the height", "Divide"]}'), three)
  assert.equal(
    parseDecomposition('{"subtasks": [{"description": "Find the area"}, {"problem": "Find the height"}, {"text": "Divide"}]}'),
    three,
  )
  assert.equal(parseDecomposition('Plan:\n1. Find the area\n2) Find the height\n- Divide'), three)
  throwsCode(() => parseDecomposition('no list at all'), 'REASONING_PARSE_ERROR')
})

test('verdicts: JSON with valid or pass, or PASS / FAIL at the start', () => {
  assert.equal(parseVerdict('{"valid": false, "score": 0.2, "reason": "empty name", "suggestions": ["add a name"]}'), {
    valid: false,
    feedback: 'empty name',
    suggestions: ['add a name'],
    score: 0.2,
  })
  assert.equal(parseVerdict('PASS: looks right'), { valid: true, feedback: 'looks right', suggestions: [] })
  assert.is(parseVerdict('FAIL - the email is invalid').valid, false)
  throwsCode(() => parseVerdict('maybe?'), 'REASONING_PARSE_ERROR')
})

test('replies of 2 MB of any kind are read or refused in a second or two each, not hours (no quadratic reading)', () => {
  // 2 MB is enough: a reader quadratic in the reply would spend hours on it (10 MB made the suite 20 s slower).
  const big = 2 * 1024 * 1024
  const cases = [
    '{'.repeat(big),
    '['.repeat(big),
    '"'.repeat(big),
    'x'.repeat(big),
    `<thinking>${'a'.repeat(big)}`,
    `{"thinking": "${'a'.repeat(big)}`,
    `Thought: ${'a '.repeat(big / 2)}`,
    '{"a": 1} '.repeat(big / 9),
    `${'1. step\n'.repeat(big / 8)}`,
  ]
  for (const raw of cases) {
    for (const read of [parseCot, parseReactStep, parseDecomposition, parseVerdict]) {
      const { ms } = cpuMsSync(() => {
        try {
          read(raw)
        } catch (e) {
          assert.is((e as { code?: string }).code, 'REASONING_PARSE_ERROR')
        }
      })
      // CPU time: linear reading takes milliseconds to a second or two under coverage; a quadratic one would take hours.
      assert.ok(ms < 5000, `${read.name} on ${JSON.stringify(raw.slice(0, 12))}… took ${ms.toFixed(0)} ms`)
    }
  }
})

test.run()
