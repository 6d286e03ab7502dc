import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { groupCommit } from '../../src/planning/group-commit.ts'

/** A write log whose writes settle only when the test says so. */
function deferredWrites() {
  const calls: Array<{ id: string; settle: (err?: Error) => void }> = []
  const write = (id: string) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ id, settle: (err) => (err ? reject(err) : resolve()) })
    })
  return { calls, write }
}

const rejection = (p: Promise<unknown>): Promise<string> => p.then(() => 'resolved', (e: Error) => e.message)

const tick = () => new Promise((r) => setImmediate(r))

test('an idle queue writes at once', async () => {
  const { calls, write } = deferredWrites()
  const put = groupCommit(write)
  void put('a')
  assert.equal(calls.map((c) => c.id), ['a'])
})

test('writes queued while a batch commits go out together, in order, when it has', async () => {
  const { calls, write } = deferredWrites()
  const put = groupCommit(write)
  const done: string[] = []
  const a = put('a').then(() => done.push('a'))
  const b = put('b').then(() => done.push('b'))
  const c = put('c').then(() => done.push('c'))
  await tick()
  assert.equal(calls.map((x) => x.id), ['a'], 'b and c wait for a')
  calls[0]!.settle()
  await a
  await tick()
  assert.equal(calls.map((x) => x.id), ['a', 'b', 'c'], 'b and c are issued in one turn')
  assert.equal(done, ['a'], 'b and c count only once their own writes settle')
  calls[2]!.settle()
  calls[1]!.settle()
  await Promise.all([b, c])
  assert.equal(done.sort(), ['a', 'b', 'c'])
})

test('a failed write rejects its own caller only, and the queue goes on', async () => {
  const { calls, write } = deferredWrites()
  const put = groupCommit(write)
  const a = rejection(put('a'))
  const b = put('b')
  calls[0]!.settle(new Error('disk full'))
  assert.is(await a, 'disk full')
  await tick()
  assert.equal(calls.map((x) => x.id), ['a', 'b'])
  calls[1]!.settle()
  await b
  const thrown = groupCommit(() => {
    throw new Error('sync failure')
  })
  assert.is(await rejection(thrown()), 'sync failure')
})

test.run()
