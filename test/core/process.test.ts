import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { processAlive, selfIdentity } from '../../src/core/process.ts'
import { waitFor } from '../support/wait.ts'

test('this process is alive, with and without its start time', () => {
  const me = selfIdentity()
  assert.is(me.pid, process.pid)
  assert.type(me.startTicks, 'number')
  assert.ok(processAlive(me.pid))
  assert.ok(processAlive(me.pid, me.startTicks))
})

test('a pid whose start time differs from the recorded one is another process (pid reuse): not alive', () => {
  const me = selfIdentity()
  assert.not.ok(processAlive(me.pid, me.startTicks! + 1))
})

test('a process that exited is not alive', async () => {
  const child = spawn(process.execPath, ['-e', '0'])
  await new Promise((r) => child.on('exit', r))
  assert.not.ok(processAlive(child.pid!))
})

test('an unreaped zombie is not alive, although kill(pid, 0) still succeeds on it', async () => {
  // `sleep 0.05 &` is a child of the shell, which then becomes `sleep 3` by exec and never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 3'])
  try {
    const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d)))))
    await waitFor(() => /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')), `pid ${pid} to become a zombie`)
    assert.not.throws(() => process.kill(pid, 0), 'the zombie still has its pid')
    assert.not.ok(processAlive(pid))
  } finally {
    parent.kill('SIGKILL')
  }
})

test.run()
