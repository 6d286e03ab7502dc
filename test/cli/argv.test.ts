import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseArgv } from '../../src/cli/argv.ts'
import { type Command, defineCommand, type Input } from '../../src/cli/command.ts'
import { errorMessage, isTeaError, type TeaError } from '../../src/core/errors.ts'
import { thrown } from '../support/expect.ts'

const probe = defineCommand({
  name: 'probe',
  summary: 'a command with one flag of every type',
  args: [
    { name: 'file', description: 'a file' },
    { name: 'more', description: 'optional', optional: true },
  ],
  flags: {
    input: { type: 'string', short: 'i', value: 'JSON', description: 'a string' },
    set: { type: 'list', value: 'k=v', description: 'repeatable' },
    quiet: { type: 'boolean', short: 'q', description: 'a switch' },
    format: { type: 'enum', values: ['mermaid', 'dot'], default: 'mermaid', description: 'an enum' },
    concurrency: { type: 'int', min: 1, max: 64, default: 4, description: 'an int with a range' },
    'ttl-ms': { type: 'ms', description: 'milliseconds' },
    'older-than': { type: 'duration', description: 'a duration' },
  },
  run: async () => 0,
})

function parse(argv: string[], command: Command = probe as Command): Input {
  const parsed = parseArgv(command, argv)
  if (parsed.help) throw new Error('expected a parse, got help')
  return parsed.input
}

/** The usage error `argv` gives, as the text the CLI prints. */
function problem(argv: string[], command: Command = probe as Command): string {
  const e = thrown(() => parseArgv(command, argv))
  assert.ok(isTeaError(e, 'USAGE'), `expected a USAGE error, got ${String(e)}`)
  return errorMessage(e)
}

test('every flag comes out typed: defaults applied, booleans false, lists empty, numbers as numbers', () => {
  const { flags, args } = parse(['a.yaml'])
  assert.equal(flags, {
    input: undefined,
    set: [],
    quiet: false,
    format: 'mermaid',
    concurrency: 4,
    'ttl-ms': undefined,
    'older-than': undefined,
  })
  assert.equal(args, { file: 'a.yaml' })
})

test('flags before or after arguments, --flag=value, short forms, repeats collected, -- ends the flags', () => {
  const { flags, args } = parse([
    '-i',
    '{}',
    'a.yaml',
    '--set',
    'x=1',
    '--set=y=2',
    '-q',
    '--ttl-ms=1500',
    '--older-than',
    '7d',
    '--',
    '--not-a-flag',
  ])
  assert.equal(flags.input, '{}')
  assert.equal(flags.set, ['x=1', 'y=2'])
  assert.is(flags.quiet, true)
  assert.is(flags['ttl-ms'], 1500)
  assert.is(flags['older-than'], 7 * 86_400_000)
  assert.equal(args, { file: 'a.yaml', more: '--not-a-flag' })
})

test('- alone is an argument (stdin), not a flag', () => {
  assert.equal(parse(['-']).args, { file: '-' })
})

test('an out-of-range or malformed number names the flag and the range: 1e99, -5, abc, 0', () => {
  assert.is(problem(['a', '--ttl-ms', '1e99']), '--ttl-ms expects a whole number of milliseconds from 1 to 2592000000 (30d), got "1e99"')
  assert.match(problem(['a', '--ttl-ms', '-5']), '--ttl-ms expects a whole number of milliseconds from 1 to 2592000000 (30d), got "-5"')
  assert.match(problem(['a', '--ttl-ms', 'abc']), 'got "abc"')
  assert.match(problem(['a', '--ttl-ms', '0']), 'from 1 to')
  assert.match(problem(['a', '--ttl-ms', '99999999999999999999']), 'from 1 to 2592000000')
  assert.match(problem(['a', '--ttl-ms', '1.5']), 'got "1.5"')
  assert.is(problem(['a', '--concurrency', '0']), '--concurrency expects a whole number from 1 to 64, got "0"')
  assert.is(problem(['a', '--concurrency', '65']), '--concurrency expects a whole number from 1 to 64, got "65"')
  assert.is(parse(['a', '--concurrency', '64']).flags.concurrency, 64)
  assert.is(parse(['a', '--ttl-ms', '2592000000']).flags['ttl-ms'], 30 * 86_400_000)
  assert.match(problem(['a', '--ttl-ms', '2592000001']), 'from 1 to 2592000000')
})

test('durations take a unit (a bare number is seconds) and stay within 3650 days', () => {
  assert.is(parse(['a', '--older-than', '90']).flags['older-than'], 90_000)
  assert.is(parse(['a', '--older-than', '30m']).flags['older-than'], 1_800_000)
  assert.is(parse(['a', '--older-than', '0']).flags['older-than'], 0)
  assert.is(
    problem(['a', '--older-than', 'soon']),
    '--older-than expects a duration such as 30m, 12h or 7d (a bare number is seconds) from 0s to 3650d, got "soon"',
  )
  assert.match(problem(['a', '--older-than', '3651d']), 'to 3650d, got "3651d"')
})

test('an enum refuses other words and suggests the nearest', () => {
  assert.is(parse(['a', '--format', 'dot']).flags.format, 'dot')
  assert.is(problem(['a', '--format', 'png']), '--format expects one of mermaid, dot, got "png"')
  assert.is(problem(['a', '--format', 'mermiad']), '--format expects one of mermaid, dot, got "mermiad" (did you mean mermaid?)')
})

test('an unknown flag is refused, with the nearest known one when there is one', () => {
  assert.is(problem(['a', '--colour']), 'unknown option --colour')
  assert.is(problem(['a', '--formt', 'dot']), 'unknown option --formt (did you mean --format?)')
  assert.is(problem(['a', '-x']), 'unknown option -x')
  assert.is(problem(['a', '-qi']), 'unknown option -qi')
})

test('a switch takes no value, and a value flag needs one', () => {
  assert.is(problem(['a', '--quiet=yes']), '--quiet takes no value')
  assert.is(problem(['a', '--input']), '--input needs a value (JSON)')
  assert.is(problem(['a', '--format']), '--format needs a value (mermaid|dot)')
})

test('the value is the next word whatever it looks like, so a negative number is a range problem', () => {
  assert.equal(parse(['a', '--input', '--quiet']).flags.input, '--quiet')
  assert.match(problem(['a', '--concurrency', '-1']), 'from 1 to 64, got "-1"')
})

test('missing and extra arguments are problems', () => {
  assert.is(problem([]), 'missing <file>: a file')
  assert.is(problem(['a', 'b', 'c']), 'unexpected argument "c"')
})

test('every problem is reported at once, as issues of one usage error', () => {
  const e = thrown(() => parseArgv(probe as Command, ['--ttl-ms', 'x', '--format', 'png'])) as TeaError
  assert.is(e.message, '3 problems with the command line')
  assert.equal(
    e.issues?.map((i) => i.message),
    [
      '--ttl-ms expects a whole number of milliseconds from 1 to 2592000000 (30d), got "x"',
      '--format expects one of mermaid, dot, got "png"',
      'missing <file>: a file',
    ],
  )
})

test('after an unknown flag the arguments are not counted (its value may be among them)', () => {
  assert.is(problem(['a', '--colour', 'red', 'blue']), 'unknown option --colour')
})

test('--help and -h win over every problem, but not as the value of a flag', () => {
  assert.equal(parseArgv(probe as Command, ['--ttl-ms', '1e99', '--bogus', '--help']), { help: true })
  assert.equal(parseArgv(probe as Command, ['-h']), { help: true })
  assert.equal(parse(['a', '--input', '-h']).flags.input, '-h')
  assert.equal(parseArgv(probe as Command, ['--', '--help']).help, false)
})

test('a required string flag must be present and not empty', () => {
  const cmd = defineCommand({
    name: 'w',
    summary: 's',
    flags: { 'agent-id': { type: 'string', value: 'ID', required: true, description: 'who' } },
    run: async () => 0,
  }) as Command
  assert.is(problem([], cmd), '--agent-id is required')
  assert.is(problem(['--agent-id', ''], cmd), '--agent-id is required')
  assert.equal(parse(['--agent-id', 'swe'], cmd).flags, { 'agent-id': 'swe' })
})

test('a variadic argument takes the rest, and may be empty', () => {
  const cmd = defineCommand({
    name: 'h',
    summary: 's',
    args: [{ name: 'words', description: 'w', variadic: true }],
    run: async () => 0,
  }) as Command
  assert.equal(parse([], cmd).args, { words: [] })
  assert.equal(parse(['aof', 'task', 'create'], cmd).args, { words: ['aof', 'task', 'create'] })
})

test('a flag named like an Object.prototype member is unknown, not inherited', () => {
  assert.is(problem(['a', '--constructor', 'x']), 'unknown option --constructor')
  assert.is(problem(['a', '--__proto__', 'x']), 'unknown option --__proto__')
})

test.run()
