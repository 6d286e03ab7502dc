import * as v from 'valibot'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compactWhere, formatIssue, formatWhere, toIssues } from '../../src/core/issues.ts'

test('a place prints the parts that are set, in a fixed order', () => {
  assert.is(formatWhere(undefined), '')
  assert.is(formatWhere({}), '')
  assert.is(formatWhere({ file: 'a.yaml' }), 'a.yaml')
  assert.is(formatWhere({ file: 'a.yaml', line: 4 }), 'a.yaml:4')
  assert.is(formatWhere({ file: 'a.yaml', line: 4, col: 11 }), 'a.yaml:4:11')
  assert.is(formatWhere({ line: 4, col: 11 }), 'line 4, column 11')
  assert.is(formatWhere({ node: 'x' }), "node 'x'")
  assert.is(formatWhere({ node: 'x', action: 'llm.call', field: 'with.prompt' }), "node 'x' (llm.call), with.prompt")
  assert.is(formatWhere({ action: 'llm.call' }), 'llm.call')
  assert.is(formatWhere({ subtask: '3', node: 'n' }), "node 'n', subtask 3")
  assert.is(
    formatWhere({ field: 'subtask_executor', subtask: 'b', node: 'w', action: 'plan.execute' }),
    "node 'w' (plan.execute), subtask b, subtask_executor",
  )
})

test('the template of a place is data for programs, never printed (the message quotes it)', () => {
  assert.is(formatWhere({ node: 'a', field: 'with.text', template: '{{ state.reply }}' }), "node 'a', with.text")
})

test('a place that came back through JSON is read defensively', () => {
  assert.is(formatWhere(null as never), '')
  assert.is(formatWhere('node x' as never), '')
})

test('compactWhere drops unset parts, and an empty place entirely', () => {
  assert.equal(compactWhere({ node: 'a', field: undefined, template: 't' }), { node: 'a', template: 't' })
  assert.is(compactWhere({ node: undefined }), undefined)
  assert.is(compactWhere(undefined), undefined)
})

test('an issue with a file position prints position, code, place, path and message, as tea validate does', () => {
  const issue = {
    code: 'INVALID_PARAMS',
    message: 'Invalid key: Expected "url" but received undefined',
    where: { file: 'bad.yaml', line: 12, col: 11, node: 'b', field: 'with.url' },
  }
  assert.is(formatIssue(issue), `bad.yaml:12:11: INVALID_PARAMS node 'b', with.url: Invalid key: Expected "url" but received undefined`)
  assert.is(
    formatIssue({ code: 'status_mismatch', message: 'frontmatter status is "ready"', where: { file: '/d/t.md' } }),
    '/d/t.md: status_mismatch frontmatter status is "ready"',
  )
})

test('an issue without a file position leaves its code out: it is one line of a list under its error', () => {
  assert.is(formatIssue({ code: 'unknown_dependency', message: "depends on 'zz'", where: { subtask: 'b' } }), "subtask b: depends on 'zz'")
  assert.is(formatIssue({ message: 'Invalid type', path: ['messages', 0, 'role'] }), 'messages.0.role: Invalid type')
  assert.is(formatIssue({ message: 'give exactly one of `prompt` or `messages`' }), 'give exactly one of `prompt` or `messages`')
})

test('valibot issues become issues with their key path, expected and received', () => {
  const r = v.safeParse(v.object({ a: v.array(v.number()), b: v.string() }), { a: [1, 'x'], b: 2 }, { abortEarly: false })
  assert.not.ok(r.success)
  const issues = toIssues(r.issues!)
  assert.equal(
    issues.map((i) => i.path),
    [['a', 1], ['b']],
  )
  assert.equal(
    issues.map((i) => [i.expected, i.received]),
    [
      ['number', '"x"'],
      ['string', '2'],
    ],
  )
  assert.ok(issues.every((i) => i.message.length > 0))
  const whole = toIssues(v.safeParse(v.string(), 3).issues!)
  assert.is(whole[0]!.path, undefined, 'an issue about the whole value has no path')
})

test.run()
