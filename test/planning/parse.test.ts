import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { flattenFlat, flattenHierarchy, parseReply } from '../../src/planning/parse.ts'

function parseErrorOf(text: string): Error & { code: string } {
  try {
    parseReply(text, 'node plan')
  } catch (e) {
    return e as Error & { code: string }
  }
  throw new Error('expected PLAN_PARSE_ERROR')
}

test('001.3R-UNIT-015 a JSON reply becomes subtasks with string ids and dependencies', () => {
  const r = parseReply(
    '{"subtasks": [{"id": 1, "description": "a", "dependencies": []}, {"id": "2", "description": "b", "dependencies": [1]}]}',
    'w',
  )
  assert.equal(flattenFlat(r.subtasks), [
    { id: '1', description: 'a', dependencies: [] },
    { id: '2', description: 'b', dependencies: ['1'] },
  ])
})

test('replies in code fences, with prose around them, as a bare array, or with depends_on/task spellings parse', () => {
  const fenced = 'Sure! Here is the plan:\n```json\n{"subtasks": [{"id": "a", "description": "x"}]}\n```\nGood luck.'
  assert.equal(flattenFlat(parseReply(fenced, 'w').subtasks), [{ id: 'a', description: 'x', dependencies: [] }])
  const prose = 'Plan follows {"steps": [{"task": "x"}, {"title": "y", "depends_on": [1]}]} as requested'
  assert.equal(flattenFlat(parseReply(prose, 'w').subtasks), [
    { id: '1', description: 'x', dependencies: [] },
    { id: '2', description: 'y', dependencies: ['1'] },
  ])
  assert.equal(parseReply('[{"description": "only"}]', 'w').subtasks, [{ description: 'only' }])
})

test('001.3R-UNIT-016 malformed JSON is PLAN_PARSE_ERROR with the raw reply and no internals', () => {
  const e = parseErrorOf('{ broken json')
  assert.ok(isTeaError(e, 'PLAN_PARSE_ERROR'))
  assert.match(e.message, '{ broken json')
  assert.match(e.message, 'node plan')
  assert.not.match(e.message, /at \w+ \(|\.ts:|valibot|node_modules/)
  assert.not.ok(e.stack?.includes('json-extract') && e.message.includes('json-extract'))
})

test('a reply without subtasks, or with a subtask lacking a description, says what is missing', () => {
  assert.match(parseErrorOf('{"answer": 42}').message, 'expected a "subtasks" array')
  assert.match(parseErrorOf('{"subtasks": [{"id": "1"}]}').message, 'a subtask needs a description')
  assert.match(parseErrorOf('"just a string"').message, 'expected a JSON object')
})

test('the raw reply in a parse error is truncated', () => {
  const e = parseErrorOf(`no json here ${'x'.repeat(2000)}`)
  assert.ok(e.message.length < 900)
  assert.match(e.message, 'more characters')
})

test('flat lists are cut at max_subtasks and dependencies on dropped subtasks go with them', () => {
  const r = parseReply(
    '[{"id":"a","description":"1"},{"id":"b","description":"2"},{"id":"c","description":"3","dependencies":["a","b"]}]',
    'w',
  )
  assert.equal(
    flattenFlat(r.subtasks, 2).map((s) => s.id),
    ['a', 'b'],
  )
})

const house = {
  subtasks: [
    {
      id: 'p1',
      description: 'Foundation',
      subtasks: [
        { id: 'a', description: 'Dig' },
        { id: 'b', description: 'Pour', dependencies: ['a'] },
      ],
    },
    {
      id: 'p2',
      description: 'Walls',
      dependencies: ['p1'],
      subtasks: [
        {
          id: 'c',
          description: 'Frame',
          subtasks: [
            { id: 'c1', description: 'Cut studs' },
            { id: 'c2', description: 'Raise', dependencies: ['c1'] },
          ],
        },
        { id: 'd', description: 'Insulate', dependencies: ['c'] },
      ],
    },
  ],
}

test('001.3R-UNIT-013 hierarchical plans keep at most max_depth levels; deeper ones fold into their ancestor', () => {
  const r = parseReply(JSON.stringify(house), 'w')
  const flat = flattenHierarchy(r.subtasks, 2)
  assert.equal(
    flat.map((s) => s.id),
    ['1.1', '1.2', '2.1', '2.2'],
  )
  assert.ok(flat.every((s) => s.id.split('.').length <= 2))
  const frame = flat.find((s) => s.id === '2.1')!
  assert.match(frame.description, 'Frame')
  assert.match(frame.description, '- Cut studs')
  assert.match(frame.description, '- Raise')
  // the phase dependency p2 → p1 reaches every member of p2 as "all of p1"
  assert.equal(frame.dependencies, ['1.1', '1.2'])
  assert.equal(flat.find((s) => s.id === '2.2')!.dependencies, ['1.1', '1.2', '2.1'])
  assert.equal(flat.find((s) => s.id === '1.2')!.dependencies, ['1.1'])
  assert.equal(flat.find((s) => s.id === '1.2')!.parent, '1')
})

test('hierarchical max_depth 1 folds every phase; depth 3 keeps the third level', () => {
  const r = parseReply(JSON.stringify(house), 'w')
  assert.equal(
    flattenHierarchy(r.subtasks, 1).map((s) => [s.id, s.dependencies]),
    [
      ['1', []],
      ['2', ['1']],
    ],
  )
  assert.equal(
    flattenHierarchy(r.subtasks, 3).map((s) => s.id),
    ['1.1', '1.2', '2.1.1', '2.1.2', '2.2'],
  )
  assert.equal(flattenHierarchy(r.subtasks, 3).find((s) => s.id === '2.1.2')!.dependencies, ['1.1', '1.2', '2.1.1'])
})

test.run()
