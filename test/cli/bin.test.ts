/**
 * The built bundle (`node dist/linux-x64/tea.cjs`, built by `npm test` first) for what only a real process shows:
 * exit codes and stderr as a user sees them, with no stack on a bad flag value.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from '../e2e/cli.ts'

test('tea aof lease --ttl-ms 1e99 exits 2 with one line naming the flag and its range, and no stack', async () => {
  const s = scratch()
  try {
    const d = ['--data-dir', s.path('data')]
    const id = (await tea(['aof', 'task', 'create', '--title', 'x', '--status', 'ready', ...d])).stdout.trim()
    for (const flag of ['--ttl-ms', '--heartbeat-ttl-ms']) {
      const r = await tea(['aof', 'lease', id, '--agent', 'swe', flag, '1e99', ...d])
      assert.is(r.code, 2, r.stderr)
      assert.is(r.stdout, '')
      assert.is(
        r.stderr,
        `tea aof lease: ${flag} expects a whole number of milliseconds from 1 to 2592000000 (30d), got "1e99"\nhint: 'tea aof lease --help' shows its usage\n`,
      )
    }
    // --interval-ms is a timer's delay, so it stops at Node's longest timer rather than at 30 days.
    for (const value of ['0', '2147483648']) {
      const worker = await tea(['worker', '--agent-id', 'swe', '--agent', 'x.yaml', '--interval-ms', value, ...d])
      assert.is(worker.code, 2)
      assert.match(worker.stderr, `--interval-ms expects a whole number of milliseconds from 1 to 2147483647 (24.9d), got "${value}"`)
      assert.not.match(worker.stderr, /internal error|\n {4}at /)
    }
  } finally {
    s.cleanup()
  }
})

test('tea aof task --help lists its commands; tea aof task create --help lists every flag with its default', async () => {
  const group = await tea(['aof', 'task', '--help'])
  assert.is(group.code, 0)
  assert.match(group.stdout, /^Usage: tea aof task <command> \[options\]\n/)
  for (const sub of ['create', 'list', 'show', 'move']) assert.match(group.stdout, new RegExp(`\\n  ${sub} +\\S`), sub)
  const create = await tea(['aof', 'task', 'create', '--help'])
  assert.is(create.code, 0)
  for (const flag of [
    '--data-dir DIR',
    '--title T',
    '--body TEXT',
    '--body-file FILE',
    '--agent A',
    '--status backlog|ready',
    '--parent TASK-ID',
    '--meta key=value',
  ]) {
    assert.match(create.stdout, `      ${flag} `, flag)
  }
  assert.match(create.stdout, '(default: backlog)')
})

test('an unknown command or flag exits 2 with a did-you-mean', async () => {
  const cmd = await tea(['aof', 'tsk'])
  assert.equal(
    [cmd.code, cmd.stderr],
    [2, "tea aof: unknown command 'tsk' (did you mean 'task'?)\nhint: 'tea aof --help' lists the commands\n"],
  )
  const flag = await tea(['runs', '--jsn'])
  assert.equal(
    [flag.code, flag.stderr],
    [2, "tea runs: unknown option --jsn (did you mean --json?)\nhint: 'tea runs --help' shows its usage\n"],
  )
})

test.run()
