/**
 * The journal of tea serve's MQTT triggers (issue 32): a message is written down before it is acknowledged, so
 * after a kill its run is still started, and the broker's second copy of it (DUP, the same packet id, topic and
 * payload) is recognised instead of starting a second run.
 */

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

test('a taken message is pending until its run ends, and still pending for the next process after a kill', () => {
  const dir = tempDir('tea-journal-')
  const journal = new TriggerJournal(dir)
  journal.take(run('motion-a'), { trigger: 'motion', packetId: 1, digest: 'd1' })
  journal.take(run('motion-b', 2), { trigger: 'motion', packetId: 2, digest: 'd2' })
  journal.done('motion-a')
  const next = new TriggerJournal(dir) // a new process reading the same data dir
  assert.equal(next.pending(), [run('motion-b', 2)])
})

test("the broker's second copy of a message names the run the first started, across a restart; another message does not", () => {
  const dir = tempDir('tea-journal-')
  new TriggerJournal(dir).take(run('motion-a'), { trigger: 'motion', packetId: 7, digest: 'abc' })
  const next = new TriggerJournal(dir)
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'abc' }), 'motion-a')
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'other payload' }), undefined)
  assert.is(next.runOf({ trigger: 'porch', packetId: 7, digest: 'abc' }), undefined, 'per trigger')
  // The broker reuses packet id 7 for a new message once the first was acknowledged: the newer one is kept.
  next.take(run('motion-b'), { trigger: 'motion', packetId: 7, digest: 'def' })
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'abc' }), undefined)
  assert.is(next.runOf({ trigger: 'motion', packetId: 7, digest: 'def' }), 'motion-b')
})

test('a QoS 0 message is pending but not remembered for a second copy (none comes); the memory is bounded', () => {
  const dir = tempDir('tea-journal-')
  const journal = new TriggerJournal(dir)
  journal.take(run('motion-q0'))
  assert.is(journal.pending().length, 1)
  for (let i = 1; i <= 300; i++)
    journal.take(run(`motion-${String(i).padStart(3, '0')}`), { trigger: 'motion', packetId: i, digest: `d${i}` })
  const next = new TriggerJournal(dir)
  assert.is(next.runOf({ trigger: 'motion', packetId: 300, digest: 'd300' }), 'motion-300')
  assert.is(next.runOf({ trigger: 'motion', packetId: 1, digest: 'd1' }), undefined, 'the oldest are forgotten')
})

test.run()
