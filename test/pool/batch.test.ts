/**
 * Batches (src/pool/batch.ts): several tasks handed to one worker, run there in turn, each reported as it starts
 * and ends; members that never start come back to the caller. One thread, so "the same worker" is observable.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import type { CodeTask } from '../../src/code/task.ts'
import type { BatchMember, BatchOptions } from '../../src/pool/batch.ts'
import { createPool } from '../../src/pool/pool.ts'
import type { Pool } from '../../src/pool/pool.ts'
import { useProbeWorker } from '../support/probe-pool.ts'

useProbeWorker() // probe tasks: test/support/probe-worker.ts

let pool: Pool
test.before(() => {
  pool = createPool({ maxThreads: 1 })
})
test.after(async () => {
  await pool.close()
})

const echo = (value: unknown): BatchMember => ({ task: { kind: 'probe', probe: 'echo', value } as never })
const sleep = (ms: number, timeoutMs?: number): BatchMember => ({
  task: { kind: 'probe', probe: 'sleep', ms, value: `slept ${ms}` } as never,
  ...(timeoutMs ? { timeoutMs } : {}),
})
const spin = (timeoutMs?: number): BatchMember => ({ task: { kind: 'probe', probe: 'spin' } as never, ...(timeoutMs ? { timeoutMs } : {}) })
const code = (body: string, id: string, timeoutMs?: number): BatchMember => {
  const task: CodeTask = { kind: 'code', selfTimed: true, code: body, args: { state: {}, subtask: { id } }, where: { subtask: id } }
  return { task, ...(timeoutMs ? { timeoutMs } : {}) }
}
const thread = async () => (await pool.run({ kind: 'probe', probe: 'thread' })).value

/** Runs a batch; `log` holds `start i`, `ok i <value>` and `fail i <code or message>` in the order they were told. */
function batch(members: BatchMember[], extra: Partial<BatchOptions> & { onStarted?: (i: number) => void } = {}) {
  const log: string[] = []
  const errors = new Map<number, unknown>()
  const b = pool.runBatch(members, {
    ...extra,
    onStart(i) {
      log.push(`start ${i}`)
      extra.onStarted?.(i)
    },
    onSettle(i, o) {
      if (o.ok) log.push(`ok ${i} ${JSON.stringify(o.result.value)}`)
      else {
        errors.set(i, o.error)
        log.push(`fail ${i} ${isTeaError(o.error) ? o.error.code : isControlSignal(o.error) ? 'cancel' : errorMessage(o.error)}`)
      }
    },
  })
  return { b, log, errors }
}

test('the members run in turn on one worker, each told as it starts (after the first) and as it ends', async () => {
  const me = await thread()
  const { b, log } = batch([echo('a'), { task: { kind: 'probe', probe: 'thread' } as never }, echo('c')])
  assert.equal(log, [], 'nothing is told before the caller holds the batch')
  assert.equal(await b.done, [])
  assert.equal(log, ['ok 0 "a"', 'start 1', `ok 1 ${me}`, 'start 2', 'ok 2 "c"'])
  assert.equal(b.withdraw(0), [], 'a batch that is over gives nothing back')
})

test('a failing member ends its batch: the members after it come back unstarted and never run', async () => {
  const events: unknown[] = []
  const { b, log, errors } = batch(
    [code('console.log("ran a"); return 1', 'a'), code('throw new Error("no water")', 'b'), code('console.log("ran c")', 'c')],
    { host: { emit: (e: unknown) => void events.push(e) } },
  )
  assert.equal(await b.done, [2])
  assert.equal(log, ['ok 0 1', 'start 1', 'fail 1 CODE_ERROR'])
  assert.equal((errors.get(1) as { where: unknown }).where, { subtask: 'b' })
  assert.equal(
    events.map((e) => (e as { message: string }).message),
    ['subtask a: ran a'],
  )
})

test("members' host notices reach the host before their member is told finished", async () => {
  const log: string[] = []
  const b = pool.runBatch([code('console.log("one"); return 1', 'a'), code('console.log("two"); return 2', 'b')], {
    host: { emit: (e: { message: string }) => void log.push(e.message) },
    onStart: (i) => log.push(`start ${i}`),
    onSettle: (i) => log.push(`end ${i}`),
  })
  assert.equal(await b.done, [])
  assert.equal(log, ['subtask a: one', 'end 0', 'start 1', 'subtask b: two', 'end 1'])
})

test('withdraw takes back members that have not started, never one that has; the worker stops before them', async () => {
  let taken: number[] = []
  const { b, log } = batch([echo('a'), sleep(300), echo('c'), echo('d')], {
    onStarted: (i) => {
      if (i === 1) taken = b.withdraw(0)
    },
  })
  assert.equal(await b.done, [])
  assert.equal(taken, [2, 3], 'members 0 and 1 had started')
  assert.equal(log, ['ok 0 "a"', 'start 1', 'ok 1 "slept 300"'])
  const early = batch([sleep(50), echo('b'), echo('c')])
  assert.equal(early.b.withdraw(1), [1, 2])
  assert.equal(await early.b.done, [])
  assert.equal(early.log, ['ok 0 "slept 50"'])
})

test("each member's time limit counts from its own start, not the batch's", async () => {
  const { b, log } = batch([sleep(300, 500), sleep(300, 500)])
  assert.equal(await b.done, [])
  assert.equal(log, ['ok 0 "slept 300"', 'start 1', 'ok 1 "slept 300"'])
})

test('a member over its limit has its worker terminated and fails with the timeout; the rest come back; the pool goes on', async () => {
  const before = await thread()
  const { b, log, errors } = batch([echo('a'), spin(200), echo('c')])
  assert.equal(await b.done, [2])
  assert.equal(b.withdraw(0), [], 'what came back through done is not given twice')
  assert.equal(log, ['ok 0 "a"', 'start 1', 'fail 1 POOL_ERROR'])
  assert.equal((errors.get(1) as { details: unknown }).details, { reason: 'timeout', timeoutMs: 200 })
  assert.is.not(await thread(), before, 'a fresh worker took its place')
  assert.is((await pool.run({ kind: 'probe', probe: 'echo', value: 'still here' })).value, 'still here')
})

test('run: code over its limit is stopped inside its worker, which stays in service', async () => {
  const before = await thread()
  const { b, log, errors } = batch([code('for (;;) {}', 'loop', 150), code('return 2', 'next')])
  assert.equal(await b.done, [1])
  assert.equal(log, ['fail 0 POOL_ERROR'])
  assert.is(errorMessage(errors.get(0)), 'subtask loop: timed out after 150 ms; stopped inside its worker')
  assert.is(await thread(), before)
})

test('the caller cancelling ends the running member with a cancel signal; the rest come back unstarted', async () => {
  const ac = new AbortController()
  const { b, log } = batch([echo('a'), spin(), echo('c')], {
    signal: ac.signal,
    onStarted: (i) => {
      if (i === 1) setTimeout(() => ac.abort(), 50)
    },
  })
  assert.equal(await b.done, [2])
  assert.equal(log, ['ok 0 "a"', 'start 1', 'fail 1 cancel'])
  const already = batch([echo('a'), echo('b')], { signal: ac.signal })
  assert.equal(await already.b.done, [1], 'a signal that had fired: member 0 is cancelled, nothing runs')
  assert.equal(already.log, ['fail 0 cancel'])
})

test.run()
