/**
 * Issue 9, probe defect D6 through the built bundle: a FIFO in a status folder. `tea aof task list`, `lint`,
 * `show` and `move` blocked forever in open(), and `tea worker` then ignored SIGTERM (its graceful stop waited
 * for a read that never returned, and a synchronous open() keeps every signal handler from running). Each command
 * here runs with a deadline after which it is killed, so a regression fails the test instead of hanging it.
 */

import { spawnSync } from 'node:child_process'
import { lstatSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { skipIf } from '../support/skip.ts'
import { collect, scratch, spawnTea, tea } from './cli.ts'

const FIFO_ID = 'TASK-2026-01-01-012'
const AGENT = `name: finisher
nodes:
  - name: finish
    run: "return { outcome: 'done', summary: 'finished ' + state.task.title }"
`

const noMkfifo = spawnSync('mkfifo', ['--version']).error ? 'mkfifo is not installed' : false

type Scratch = ReturnType<typeof scratch>

/** A data dir with a FIFO where a ready task's file would be. */
async function withFifo(): Promise<{ s: Scratch; data: string; fifo: string }> {
  const s = scratch({ 'agent.yaml': AGENT })
  const data = s.path('data')
  const init = await tea(['aof', 'init', '--data-dir', data])
  assert.is(init.code, 0, init.stderr)
  const fifo = s.path(`data/tasks/ready/${FIFO_ID}.md`)
  const r = spawnSync('mkfifo', [fifo])
  assert.is(r.status, 0, String(r.stderr))
  return { s, data, fifo }
}

skipIf(test, noMkfifo, 'task list, lint, show and move report the FIFO at its path and return', async () => {
  const { s, data, fifo } = await withFifo()
  try {
    const cases: Array<[string[], number]> = [
      [['aof', 'task', 'list'], 0],
      [['aof', 'task', 'list', '--json'], 0],
      [['aof', 'lint'], 1],
      [['aof', 'task', 'show', FIFO_ID], 1],
      [['aof', 'task', 'move', FIFO_ID, 'cancelled'], 1],
    ]
    for (const [args, code] of cases) {
      const r = await tea([...args, '--data-dir', data], { timeoutMs: 15_000 })
      const what = args.join(' ')
      assert.is(r.signal, null, `${what} hung and was killed`)
      assert.is(r.code, code, `${what}: ${r.stderr}`)
      assert.match(r.stdout + r.stderr, fifo, `${what} names the FIFO`)
      assert.match(r.stdout + r.stderr, 'not a regular file', what)
      assert.not.match(r.stderr, /\n\s+at /, `${what} printed a stack`)
    }
    assert.ok(lstatSync(fifo).isFIFO(), 'the FIFO is left where it was')
  } finally {
    s.cleanup()
  }
})

skipIf(test, noMkfifo, 'tea worker --once with only a FIFO in ready/: nothing to do, exit 0', async () => {
  const { s, data } = await withFifo()
  try {
    const r = await tea(['worker', '--agent-id', 'w1', '--agent', s.path('agent.yaml'), '--data-dir', data, '--once'], {
      timeoutMs: 20_000,
    })
    assert.is(r.signal, null, `the worker hung and was killed: ${r.stderr}`)
    assert.is(r.code, 0, r.stderr)
    assert.is(r.stdout, '')
  } finally {
    s.cleanup()
  }
})

skipIf(test, noMkfifo, 'tea worker polling a queue that holds a FIFO works its real task and stops on SIGTERM', async () => {
  const { s, data } = await withFifo()
  let child: ReturnType<typeof spawnTea> | undefined
  try {
    const created = await tea(['aof', 'task', 'create', '--title', 'real work', '--agent', 'w1', '--status', 'ready', '--data-dir', data])
    assert.is(created.code, 0, created.stderr)
    const id = created.stdout.trim()
    child = spawnTea(['worker', '--agent-id', 'w1', '--agent', s.path('agent.yaml'), '--data-dir', data, '--interval-ms', '100'])
    const done = collect(child, { timeoutMs: 60_000 })
    // The real task's line proves a claim has listed the ready folder, FIFO included; the worker polls on after it.
    let out = ''
    const worked = await new Promise<boolean>((resolve) => {
      const deadline = setTimeout(() => resolve(false), 30_000)
      child!.stdout!.on('data', (d) => {
        out += d
        if (out.includes('\n')) {
          clearTimeout(deadline)
          resolve(true)
        }
      })
      child!.on('close', () => resolve(false))
    })
    assert.ok(worked, `the worker never reported its real task (blocked on the FIFO?): ${out}`)
    const line = JSON.parse(out.split('\n')[0]!) as Record<string, unknown>
    assert.equal([line.taskId, line.outcome, line.status], [id, 'done', 'review'])
    // Let it poll (and list the FIFO) a few more times, then stop it. A worker that does not exit within 10 s of
    // SIGTERM is killed, and the assertions below fail.
    await new Promise((resolve) => setTimeout(resolve, 500))
    child.kill('SIGTERM')
    const killer = setTimeout(() => child!.kill('SIGKILL'), 10_000)
    const r = await done
    clearTimeout(killer)
    assert.is(r.signal, null, `the worker ignored SIGTERM and was killed: ${r.stderr}`)
    assert.is(r.code, 130, r.stderr)
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    s.cleanup()
  }
})

test.run()
