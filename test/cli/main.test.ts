import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type Command, defineCommand } from '../../src/cli/command.ts'
import { memoryIo } from '../../src/cli/io.ts'
import { main, runMain } from '../../src/cli/main.ts'
import { ERROR_CODES, type ErrorCode, exitKind, TeaError } from '../../src/core/errors.ts'

/** A tree whose `throw` command throws what the test puts in `thrown`. */
let thrown: unknown
const fail = defineCommand({
  name: 'fail',
  summary: 'throws',
  run: async () => {
    throw thrown
  },
})
const echo = defineCommand({
  name: 'echo',
  summary: 'prints its input',
  args: [{ name: 'word', description: 'a word' }],
  flags: { times: { type: 'int', min: 1, max: 3, default: 1, description: 'how often' } },
  run: async ({ args, flags }, io) => {
    io.out(`${args.word.repeat(flags.times)}\n`)
    return 0
  },
})
const group = defineCommand({ name: 'grp', summary: 'a group', subcommands: [echo as Command] })
const root = defineCommand({ name: 'tea', summary: 'root', subcommands: [fail as Command, echo as Command, group as Command] }) as Command

async function cli(argv: string[], tree: Command = root) {
  const io = memoryIo()
  const code = await runMain(tree, argv, io)
  return { code, out: io.stdout, err: io.stderr }
}

test('a command runs with its typed input and its exit code is the exit code', async () => {
  assert.equal(await cli(['echo', 'ab', '--times', '2']), { code: 0, out: 'abab\n', err: '' })
  assert.equal(await cli(['grp', 'echo', 'x']), { code: 0, out: 'x\n', err: '' })
})

test('every error code exits as its kind says: 2 for usage, 1 for failure', async () => {
  for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
    thrown = new TeaError(code, 'it went wrong')
    const r = await cli(['fail'])
    assert.is(r.code, exitKind(code) === 'usage' ? 2 : 1, code)
    assert.is(r.out, '')
  }
})

test('an error prints once: the command, the code, the message with its issues, and the hint', async () => {
  thrown = new TeaError('RUN_NOT_FOUND', 'no run nope in /d', { hint: "'tea runs' lists the runs" })
  assert.equal(await cli(['fail']), {
    code: 2,
    out: '',
    err: "tea fail: RUN_NOT_FOUND: no run nope in /d\nhint: 'tea runs' lists the runs\n",
  })
  thrown = new TeaError('AOF_INVALID', 'bad task', { where: { file: 't.md', line: 2 }, issues: [{ message: 'no title', path: ['title'] }] })
  assert.equal((await cli(['fail'])).err, 'tea fail: AOF_INVALID: t.md:2: bad task:\n  title: no title\n')
})

test('a usage error prints without its code, with a hint to the command help', async () => {
  thrown = new TeaError('USAGE', 'expected a task id')
  assert.equal(await cli(['fail']), { code: 2, out: '', err: "tea fail: expected a task id\nhint: 'tea fail --help' shows its usage\n" })
  assert.equal(await cli(['grp', 'echo', 'x', '--times', '9']), {
    code: 2,
    out: '',
    err: `tea grp echo: --times expects a whole number from 1 to 3, got "9"\nhint: 'tea grp echo --help' shows its usage\n`,
  })
})

test('anything else is a bug and prints its stack (exit 1); a system error prints its message only', async () => {
  thrown = new TypeError('x is not a function')
  const bug = await cli(['fail'])
  assert.is(bug.code, 1)
  assert.match(bug.err, /^tea fail: internal error: TypeError: x is not a function\n {4}at /)
  thrown = Object.assign(new Error("ENOSPC: no space left on device, write '/d/x'"), { code: 'ENOSPC' })
  assert.equal(await cli(['fail']), {
    code: 1,
    out: '',
    err: "tea fail: STORE_FULL: ENOSPC: no space left on device, write '/d/x'\nhint: free space on that disk\n",
  })
  thrown = Object.assign(new Error("EACCES: permission denied, open '/d/x'"), { code: 'EACCES' })
  assert.equal(await cli(['fail']), { code: 1, out: '', err: "tea fail: EACCES: permission denied, open '/d/x'\n" })
})

test('an unknown command exits 2 naming the nearest ones', async () => {
  assert.equal(await cli(['ehco']), {
    code: 2,
    out: '',
    err: "tea: unknown command 'ehco' (did you mean 'echo'?)\nhint: 'tea --help' lists the commands\n",
  })
  assert.equal((await cli(['grp', 'nope'])).err, "tea grp: unknown command 'nope'\nhint: 'tea grp --help' lists the commands\n")
})

test('--help anywhere prints the help of the command named before it, on stdout, exit 0', async () => {
  const r = await cli(['grp', 'echo', '--times', '99', '--help'])
  assert.is(r.code, 0)
  assert.match(r.out, /^Usage: tea grp echo <word> \[options\]\n/)
  assert.is(r.err, '')
})

test('a group without its command prints its help on stdout and exits 2', async () => {
  const r = await cli(['grp'])
  assert.is(r.code, 2)
  assert.match(r.out, /^Usage: tea grp <command> \[options\]\n/)
})

test('tea: --version, -V and version print the build; no command prints the help (exit 2)', async () => {
  for (const argv of [['--version'], ['-V'], ['version']]) {
    const io = memoryIo()
    assert.is(await main(argv, io), 0, argv.join(' '))
    assert.match(io.stdout, /^tea \S+ \(source; features: [a-z, ]+; node v/)
  }
  const io = memoryIo()
  assert.is(await main([], io), 2)
  assert.match(io.stdout, /^Usage: tea <command> \[options\]\n/)
})

test('tea help <command…> prints that command’s help; an unknown one is a usage error', async () => {
  const a = memoryIo()
  assert.is(await main(['help', 'aof', 'task', 'create'], a), 0)
  const b = memoryIo()
  await main(['aof', 'task', 'create', '--help'], b)
  assert.is(a.stdout, b.stdout)
  assert.match(a.stdout, /^Usage: tea aof task create --title T \[options\]\n/)
  const c = memoryIo()
  assert.is(await main(['help', 'aof', 'tsk'], c), 2)
  assert.match(c.stderr, "unknown command 'tsk' (did you mean 'task'?)")
})

test('tea --help and tea help print the same', async () => {
  const a = memoryIo()
  const b = memoryIo()
  await main(['--help'], a)
  await main(['help'], b)
  assert.is(a.stdout, b.stdout)
  assert.match(a.stdout, /\n {2}worker +run an agent on the AOF tasks/)
})

test.run()
