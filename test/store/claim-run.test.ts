/**
 * Store.claimRun is atomic across processes (issue 9, item 1): several processes racing for one run, each refusing
 * a live owner, leave exactly one winner — where the old check-then-write lets several through.
 */

import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import type { RunRecord, Store } from '../../src/store/types.ts'
import { tempDir } from '../support/temp-dir.ts'

const RUN: RunRecord = {
  id: 'r',
  agent: 'a',
  agentPath: '/a.yaml',
  agentHash: 'h',
  status: 'failed',
  node: null,
  step: 0,
  createdAt: 1,
  updatedAt: 1,
  pid: 999_999_999,
}

async function race(mode: 'claim' | 'read-then-write', racers: number): Promise<number> {
  const dir = tempDir('tea-claim-')
  try {
    const store = openLmdbStore(dir)
    await store.createRun(RUN)
    await store.close()
    const children = Array.from({ length: racers }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', new URL('./claim-child.ts', import.meta.url).pathname, dir, mode])
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => process.stderr.write(d))
      const closed = new Promise<void>((resolve) => child.on('close', () => resolve()))
      /** Resolves once the child has printed the line `line`; fails if it ends without. */
      const said = (line: string) =>
        new Promise<void>((resolve, reject) => {
          const check = () => {
            if (!out.split('\n').includes(line)) return
            child.stdout.off('data', check)
            resolve()
          }
          child.stdout.on('data', check)
          check()
          void closed.then(() => reject(new Error(`a racer ended without saying '${line}': ${out}`)))
        })
      const answer = () => Promise.race([said('won').then(() => 'won'), said('lost').then(() => 'lost')])
      return { child, said, answer, closed }
    })
    const all = (line: string) => Promise.all(children.map((c) => c.said(line)))
    await all('ready')
    for (const { child } of children) child.stdin.write('go\n')
    if (mode === 'read-then-write') {
      await all('read')
      for (const { child } of children) child.stdin.write('write\n')
    }
    // Every racer stays alive (a live owner to the others) until all have answered.
    const answers = await Promise.all(children.map((c) => c.answer()))
    for (const { child } of children) child.stdin.end('end\n')
    await Promise.all(children.map((c) => c.closed))
    return answers.filter((a) => a === 'won').length
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('four processes claiming one run at the same instant: exactly one wins, in every round', async () => {
  for (let round = 0; round < 3; round++) assert.is(await race('claim', 4), 1, `round ${round}`)
})

test('(control) check-then-write lets more than one through, so the race above is a real one', async () => {
  let most = 0
  for (let round = 0; round < 5 && most < 2; round++) most = Math.max(most, await race('read-then-write', 4))
  assert.ok(most >= 2, `the unguarded way should double-claim at least once, got ${most}`)
})

for (const [name, open] of [
  ['memory', () => createMemoryStore()],
  ['lmdb', () => openLmdbStore(tempDir('tea-claim-'))],
] as Array<[string, () => Store]>) {
  test(`${name}: a refused claim writes nothing; an accepted one writes what take returned`, async () => {
    const store = open()
    await store.createRun(RUN)
    const refused = await store
      .claimRun('r', () => {
        throw new Error('no')
      })
      .then(
        () => 'claimed',
        (e: Error) => e.message,
      )
    assert.match(refused, /no/)
    assert.is((await store.getRun('r'))?.status, 'failed')
    const taken = await store.claimRun('r', (current) => ({ ...current!, status: 'running', pid: 42 }))
    assert.is(taken.pid, 42)
    assert.equal(await store.getRun('r'), { ...RUN, status: 'running', pid: 42 })
    const fresh = await store.claimRun('new', (current) => {
      assert.is(current, undefined)
      return { ...RUN, id: 'ignored' }
    })
    assert.is(fresh.id, 'new', 'the id is the claimed one')
    await store.close()
  })
}

test.run()
