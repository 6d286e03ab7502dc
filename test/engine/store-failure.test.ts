/**
 * When the store fails under a run (a full disk: STORE_FULL), the run ends `failed` with that error instead of an
 * uncaught exception, is recorded as failed while the store can still take that write, and resumes once the store
 * works again (issue 9, item 3; the store's own STORE_FULL mapping is tested in test/store).
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { TeaError } from '../../src/core/errors.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import type { Store } from '../../src/store/types.ts'
import { nodesRun, run } from './harness.ts'

const AGENT = `name: fill
nodes:
${Array.from(
  { length: 6 },
  (_, i) => `  - name: n${i + 1}
    run: "return { n${i + 1}: 'x'.repeat(50) }"`,
).join('\n')}
`

/** A memory store whose checkpoint writes fail with STORE_FULL while `full` is set. */
function fillable(): { store: Store; full: { on: boolean } } {
  const inner = createMemoryStore()
  const full = { on: false }
  const failing =
    <A extends unknown[]>(write: (...a: A) => Promise<void>) =>
    (...a: A) =>
      full.on ? Promise.reject(new TeaError('STORE_FULL', 'no space left on the device holding /data')) : write(...a)
  return { store: { ...inner, appendStep: failing(inner.appendStep), snapshot: failing(inner.snapshot) }, full }
}

test('a full disk mid-run ends the run failed with STORE_FULL, recorded, never left running', async () => {
  const { store, full } = fillable()
  let steps = 0
  const original = store.appendStep
  store.appendStep = (...a) => {
    if (++steps === 3) full.on = true
    return original(...a)
  }
  const ran = await run(AGENT, { store, runId: 'f' })
  assert.is(ran.status, 'failed')
  assert.is(ran.error?.code, 'STORE_FULL')
  const record = await store.getRun('f')
  assert.is(record?.status, 'failed')
  assert.is(record?.error?.code, 'STORE_FULL')
  assert.ok(
    ran.events.some((e) => e.type === 'error'),
    'the failure is told on the event stream',
  )

  full.on = false
  store.appendStep = original
  const resumed = await run(AGENT, { store, runId: 'f', resume: true })
  assert.is(resumed.status, 'completed')
  assert.equal(Object.keys(resumed.state).sort(), ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'])
  assert.not.ok(nodesRun(resumed.events).includes('n1'), 'recorded nodes do not run again')
})

test('when even the failure cannot be written, the run still ends with STORE_FULL (the record is left as it was)', async () => {
  const { store, full } = fillable()
  const updateRun = store.updateRun
  store.updateRun = (id, patch) =>
    full.on && patch.status === 'failed' ? Promise.reject(new TeaError('STORE_FULL', 'still full')) : updateRun(id, patch)
  let steps = 0
  const original = store.appendStep
  store.appendStep = (...a) => {
    if (++steps === 2) full.on = true
    return original(...a)
  }
  const ran = await run(AGENT, { store, runId: 'g' })
  assert.is(ran.status, 'failed')
  assert.is(ran.error?.code, 'STORE_FULL')
  assert.is((await store.getRun('g'))?.status, 'running')
})

test.run()
