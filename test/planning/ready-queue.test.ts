import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ReadyQueue } from '../../src/planning/ready-queue.ts'

test('the ready queue hands out the smallest topological position first, whatever the insertion order', () => {
  const q = new ReadyQueue()
  const positions = [5, 3, 9, 0, 7, 1, 8, 2, 6, 4]
  for (const p of positions) q.push(p, `t${p}`)
  assert.is(q.size, 10)
  const out: string[] = []
  for (let id = q.pop(); id !== undefined; id = q.pop()) out.push(id)
  assert.equal(
    out,
    positions.map((_, i) => `t${i}`),
  )
  assert.is(q.pop(), undefined)
})

test('interleaved pushes and pops keep the order', () => {
  const q = new ReadyQueue()
  q.push(4, 'd')
  q.push(2, 'b')
  assert.is(q.pop(), 'b')
  q.push(1, 'a')
  q.push(3, 'c')
  assert.equal([q.pop(), q.pop(), q.pop()], ['a', 'c', 'd'])
})

test.run()
