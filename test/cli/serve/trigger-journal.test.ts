/**
 * The journal of tea serve's MQTT triggers (issue 32): a message is written down before it is acknowledged, so
 * after a kill its run is still started, and the broker's second copy of it (DUP, the same packet id, topic and
 * payload) is recognised instead of starting a second run.
 */

import { appendFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { TriggerJournal } from '../../../src/cli/serve/trigger-journal.ts'
import { tempDir } from '../../support/temp-dir.ts'

const run = (runId: string, n = 1) => ({
  runId,
  trigger: 'motion',
  topic: 'home/hall/motion',
  input: { topic: 'home/hall/motion', payload: { n } },
})

test('a taken message is pending until its run ends, and still pending for the next process after a kill', async () => {
  const dir = tempDir('tea-journal-')
  const journal = new TriggerJournal(dir)
  await journal.take(run('motion-a'), { trigger: 'motion', packetId: 1, digest: 'd1' })
  await journal.take(run('motion-b', 2), { trigger: 'motion', packetId: 2, digest: 'd2' })
  journal.done('motion-a')
  await journal.close()
  const next = new TriggerJournal(dir) // a new process reading the same data dir
  assert.equal(next.pending(), [run('motion-b', 2)])
})

test("the broker's second copy of a message names the run the first started, across a restart; another message does not", async () => {
  const dir = tempDir('tea-journal-')
  const first = new TriggerJournal(dir)
  await first.take(run('motion-a'), { trigger: 'motion', packetId: 7, digest: 'abc' })
  first.done('motion-a') // its run ended: the key is still remembered, the run no longer pending
  await first.close()
  const next = new TriggerJournal(dir)
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'abc' }), 'motion-a')
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'other payload' }), undefined)
  assert.is(next.runOf({ trigger: 'porch', packetId: 7, digest: 'abc' }), undefined, 'per trigger')
  // The broker reuses packet id 7 for a new message once the first was acknowledged: the newer one is kept.
  assert.equal(next.pending(), [])
  await next.take(run('motion-b'), { trigger: 'motion', packetId: 7, digest: 'def' })
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'abc' }), undefined)
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'def' }), 'motion-b')
  await next.close()
})

test('a QoS 0 message is pending but not remembered for a second copy (none comes); the memory is bounded', async () => {
  const dir = tempDir('tea-journal-')
  const journal = new TriggerJournal(dir)
  await journal.take(run('motion-q0'))
  assert.is(journal.pending().length, 1)
  for (let i = 1; i <= 300; i++) {
    const id = `motion-${String(i).padStart(3, '0')}`
    await journal.take(run(id), { trigger: 'motion', packetId: i, digest: `d${i}` })
    journal.done(id)
  }
  await journal.close()
  const next = new TriggerJournal(dir)
  assert.is(next.runOf({ trigger: 'motion', packetId: 300, digest: 'd300' }), 'motion-300')
  assert.is(next.runOf({ trigger: 'motion', packetId: 1, digest: 'd1' }), undefined, 'the oldest are forgotten')
  assert.equal(
    next.pending().map((r) => r.runId),
    ['motion-q0'],
  )
})

test('a line torn by a crash (never flushed, so never acknowledged) is skipped; what came before it is kept', async () => {
  const dir = tempDir('tea-journal-')
  const journal = new TriggerJournal(dir)
  await journal.take(run('motion-a'), { trigger: 'motion', packetId: 1, digest: 'd1' })
  await journal.close()
  appendFileSync(join(dir, 'serve-mqtt/journal.ndjson'), '{"take": {"runId": "motion-b", "trig')
  const next = new TriggerJournal(dir)
  assert.equal(
    next.pending().map((r) => r.runId),
    ['motion-a'],
  )
  assert.is(next.runOf({ trigger: 'motion', packetId: 1, digest: 'd1' }), 'motion-a')
  await next.close()
})

test('the file is rewritten with only what is still needed once it has grown: large payloads of ended runs do not pile up', async () => {
  const dir = tempDir('tea-journal-')
  const journal = new TriggerJournal(dir)
  const big = 'x'.repeat(1 << 20)
  for (let i = 0; i < 20; i++) {
    await journal.take({ ...run(`motion-${i}`), input: { payload: big } }, { trigger: 'motion', packetId: i + 1, digest: `d${i}` })
    journal.done(`motion-${i}`)
  }
  await journal.close()
  assert.ok(statSync(join(dir, 'serve-mqtt/journal.ndjson')).size < 10 * 2 ** 20, 'bounded by the compaction, not 20 MiB')
  const next = new TriggerJournal(dir)
  assert.is(next.runOf({ trigger: 'motion', packetId: 20, digest: 'd19' }), 'motion-19', 'what is remembered survives it')
  assert.equal(next.pending(), [])
})

test.run()
