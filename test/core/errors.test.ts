import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ERROR_CODES, errorIssue, errorMessage, exitKind, isTeaError, TeaError, withWhere, type ErrorCode } from '../../src/core/errors.ts'

const src = join(dirname(fileURLToPath(import.meta.url)), '../../src')

test('a TeaError carries its place and its issues as fields, not in its message', () => {
  const e = new TeaError('INVALID_PARAMS', 'invalid parameters for llm.call', {
    where: { node: 'ask', action: 'llm.call', field: undefined },
    issues: [{ message: 'Invalid type: Expected string but received 3', path: ['prompt'], expected: 'string', received: '3' }],
    details: { action: 'llm.call' },
  })
  assert.is(e.name, 'TeaError')
  assert.is(e.message, 'invalid parameters for llm.call')
  assert.equal(e.where, { node: 'ask', action: 'llm.call' }, 'unset parts are dropped')
  assert.equal(e.issues, [{ message: 'Invalid type: Expected string but received 3', path: ['prompt'], expected: 'string', received: '3' }])
  assert.ok(isTeaError(e, 'INVALID_PARAMS'))
  const bare = new TeaError('INTERNAL', 'x', { where: {}, issues: [] })
  assert.is(bare.where, undefined)
  assert.is(bare.issues, undefined)
})

test('toJSON carries code, message, hint, place, issues and details, for --stream and --json', () => {
  const e = new TeaError('TEMPLATE_ERROR', `'stat' is undefined in "{{ stat }}"`, {
    where: { node: 'a', field: 'with.text', template: '{{ stat }}' },
    hint: 'write `x | default(…)`',
    details: { offset: 3 },
  })
  const json = JSON.parse(JSON.stringify(e))
  assert.equal(json, {
    code: 'TEMPLATE_ERROR',
    message: `'stat' is undefined in "{{ stat }}"`,
    hint: 'write `x | default(…)`',
    where: { node: 'a', field: 'with.text', template: '{{ stat }}' },
    offset: 3,
  })
  const listed = new TeaError('PLAN_INVALID', 'invalid plan', { issues: [{ code: 'empty', message: 'the plan has no subtasks' }] }).toJSON()
  assert.equal(listed, { code: 'PLAN_INVALID', message: 'invalid plan', issues: [{ code: 'empty', message: 'the plan has no subtasks' }] })
})

test('errorMessage composes the place, the message and every issue once', () => {
  const e = new TeaError('INVALID_PARAMS', 'invalid parameters for llm.call', {
    where: { node: 'ask', action: 'llm.call' },
    issues: [
      { message: 'Invalid type', path: ['prompt'] },
      { message: 'Invalid value', path: ['timeout'] },
    ],
  })
  assert.is(errorMessage(e), "node 'ask' (llm.call): invalid parameters for llm.call:\n  prompt: Invalid type\n  timeout: Invalid value")
  assert.is(errorMessage(new TeaError('NO_ROUTE', 'no goto rule matched', { where: { node: 'a' } })), "node 'a': no goto rule matched")
  assert.is(errorMessage(new TeaError('USAGE', 'run: unknown option --x')), 'run: unknown option --x')
})

test('errorMessage reads the JSON form too (an error event), and anything else thrown', () => {
  const event = JSON.parse(
    JSON.stringify(new TeaError('NODE_TIMEOUT', 'exceeded its timeout of 1 s', { where: { node: 'wait', action: 'test.sleep' } })),
  )
  assert.is(errorMessage(event), "node 'wait' (test.sleep): exceeded its timeout of 1 s")
  assert.is(errorMessage(new RangeError('bad input')), 'bad input')
  assert.is(errorMessage('plain text'), 'plain text')
  assert.is(errorMessage({ a: 1 }), '{"a":1}')
  assert.is(errorMessage(undefined), 'undefined')
})

test('an agent file error lists each problem at its own line under the file', () => {
  const e = new TeaError('AGENT_INVALID', '2 problems', {
    where: { file: 'bad.yaml' },
    issues: [
      { code: 'UNKNOWN_ACTION', message: "unknown action 'llm.cal'", where: { file: 'bad.yaml', line: 4, col: 11, node: 'a' } },
      { code: 'UNKNOWN_NODE', message: "goto target 'nowhere' is not a node of this agent", where: { file: 'bad.yaml', line: 5, col: 11 } },
    ],
  })
  assert.is(
    errorMessage(e),
    "bad.yaml: 2 problems:\n  bad.yaml:4:11: UNKNOWN_ACTION node 'a': unknown action 'llm.cal'\n  bad.yaml:5:11: UNKNOWN_NODE goto target 'nowhere' is not a node of this agent",
  )
})

test('withWhere adds a place on the way up: it fills what the error left unset and keeps everything else', () => {
  const inner = new TeaError('TEMPLATE_ERROR', 'boom', {
    where: { node: 'a', field: 'with.text' },
    issues: [{ message: 'i' }],
    details: { offset: 1 },
    hint: 'h',
  })
  const outer = withWhere(inner, { node: 'ignored', action: 'json.parse' })
  assert.equal(outer.where, { node: 'a', action: 'json.parse', field: 'with.text' })
  assert.equal(
    [outer.code, outer.message, outer.issues, outer.details, outer.hint],
    ['TEMPLATE_ERROR', 'boom', [{ message: 'i' }], { offset: 1 }, 'h'],
  )
  assert.is(outer.cause, inner)
  assert.is(errorMessage(outer), "node 'a' (json.parse), with.text: boom:\n  i")
  assert.is(withWhere(inner, undefined), inner)
})

test('errorIssue turns anything thrown into one issue for a report that goes on', () => {
  const e = new TeaError('AOF_INVALID', 'invalid task frontmatter', {
    where: { file: '/d/t.md' },
    issues: [{ message: 'expected a string', path: ['title'] }],
  })
  assert.equal(errorIssue(e), {
    code: 'AOF_INVALID',
    message: 'invalid task frontmatter:\n  title: expected a string',
    where: { file: '/d/t.md' },
  })
  assert.equal(errorIssue(new Error('EACCES')), { message: 'EACCES' })
})

test('every code exits as its table says: usage (2) for what is wrong before anything ran, failure (1) otherwise', () => {
  const usage = Object.entries(ERROR_CODES)
    .filter(([, [kind]]) => kind === 'usage')
    .map(([code]) => code)
    .sort()
  assert.equal(usage, [
    'AGENT_INVALID',
    'AGENT_NOT_FOUND',
    'BAD_REQUEST',
    'BODY_TOO_LARGE',
    'CASSETTE_INVALID',
    'DUPLICATE_NODE',
    'HOST_NOT_ALLOWED',
    'INPUT_TOO_DEEP',
    'INPUT_TOO_LARGE',
    'INVALID_INPUT',
    'LLM_BAD_MODEL',
    'MISSING_KEY',
    'NOT_FOUND',
    'ORIGIN_NOT_ALLOWED',
    'PATH_OUTSIDE_AGENTS',
    'RUN_EXISTS',
    'RUN_NOT_ACTIVE',
    'RUN_NOT_FOUND',
    'RUN_NOT_RESUMABLE',
    'SHELL_PERMISSIONS_OFF',
    'TEA_UNSUPPORTED',
    'TEMPLATE_SYNTAX',
    'UNAUTHORIZED',
    'UNKNOWN_KEY',
    'UNSUPPORTED_MEDIA_TYPE',
    'USAGE',
    'YAML_SYNTAX',
  ])
  for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
    assert.is(exitKind(code), usage.includes(code) ? 'usage' : 'failure', code)
    assert.ok(ERROR_CODES[code][1].length > 0, `${code} has a meaning`)
  }
  assert.is(exitKind('NOT_A_CODE'), 'failure', 'an unknown code is a failure')
  assert.is(exitKind('toString'), 'failure', 'inherited names are not codes')
})

/**
 * Codes in the table that nothing in src/ throws yet. They were added with the reliability work (issue 9) that is
 * meant to throw them; each must leave this list when it does, and leave the table if that work is dropped.
 */
const NOT_YET_THROWN: string[] = []

test('every code in the table is used somewhere in src/: tea advertises no code that never happens', () => {
  const text = sources(src)
    .filter((f) => !f.endsWith('core/errors.ts'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n')
  const used = (code: string): boolean => text.includes(`'${code}'`) || text.includes(`"${code}"`)
  const unused = Object.keys(ERROR_CODES).filter((c) => !used(c))
  assert.equal(unused.sort(), [...NOT_YET_THROWN].sort())
})

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

test.run()
