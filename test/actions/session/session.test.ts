/**
 * Issue 29: TEA's session persistence (`settings.session`, session.load/save/delete/exists) on tea's store, with
 * TEA's result shapes (session_persistence_actions.py); sessions outlast the run that saved them.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { run } from '../../engine/harness.ts'

/** Values made by run: code come from its sandbox's realm; compared as plain JSON. */
const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x))

const NODES = `nodes:
  - name: save
    uses: session.save
    with: { session_id: "{{ state.sid }}" }
    output: saved
  - name: exists
    uses: session.exists
    output: there
`

test('session.save keeps the state under its id, a later run loads it, session.delete removes it', async () => {
  const store = createMemoryStore()
  const first = await run(
    `name: s
settings:
  session: { backend: memory, persist_fields: [history, user] }
${NODES}`,
    { store, input: { sid: 'abc', session_id: 'abc', history: ['hi'], user: { name: 'Ann' }, secret: 'x' } },
  )
  assert.is(first.status, 'completed', JSON.stringify(first.error))
  assert.equal(first.state.saved, { success: true, session_id: 'abc' })
  assert.equal(first.state.there, { exists: true })

  const second = await run(
    `name: s2
settings:
  session: {}
nodes:
  - name: load
    uses: session.load
    with: { session_id: abc }
    output: data
  - name: miss
    uses: session.load
    with: { session_id: nope, default: { history: [] } }
    output: fallback
  - name: drop
    uses: session.delete
    with: { session_id: abc }
    output: dropped
  - name: gone
    uses: session.exists
    with: { session_id: abc }
    output: after
`,
    { store, runId: 'run-2' },
  )
  assert.is(second.status, 'completed', JSON.stringify(second.error))
  // persist_fields: only those keys were kept.
  assert.equal(second.state.data, { history: ['hi'], user: { name: 'Ann' } })
  assert.equal(second.state.fallback, { history: [] })
  assert.equal(second.state.dropped, { success: true })
  assert.equal(second.state.after, { exists: false })
})

test('session.save without fields keeps every state key but those starting with _; ttl expires it', async () => {
  const store = createMemoryStore()
  const r = await run(
    `name: s
settings:
  session: { ttl: 3600 }
nodes:
  - name: save
    uses: session.save
    with: { session_id: t1 }
    output: saved
  - name: brief
    uses: session.save
    with: { session_id: t2, ttl: 1, fields: [a] }
`,
    { store, input: { a: 1, _private: 2 } },
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.equal((await store.memoryGet('tea.session', 't1')).value, { a: 1 })
  assert.is((await store.memoryGet('tea.session', 't2')).found, true)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  assert.is((await store.memoryGet('tea.session', 't2')).found, false)
})

test('without settings.session, session.save fails and session.load gives its default, as in TEA', async () => {
  const r = await run(`name: s
nodes:
  - name: save
    uses: session.save
    with: { session_id: x }
    output: saved
  - name: load
    uses: session.load
    with: { session_id: x, default: { empty: true } }
    output: loaded
`)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.equal(r.state.saved, { success: false, error: 'No session backend configured' })
  assert.equal(r.state.loaded, { empty: true })
})

test('session.save without an id anywhere says it is required', async () => {
  const r = await run(`name: s
settings:
  session: {}
nodes:
  - name: save
    uses: session.save
    output: saved
`)
  assert.equal(r.state.saved, { success: false, error: 'session_id is required' })
})

test('with settings.session, a run given a session_id starts from the session; auto_save saves the completed state', async () => {
  const store = createMemoryStore()
  const yaml = `name: chat
settings:
  session: { auto_save: true, persist_fields: [history, session_id] }
nodes:
  - name: turn
    run: |
      return { history: [...(state.history ?? []), state.message], turns: (state.turns ?? 0) + 1 }
`
  const first = await run(yaml, { store, runId: 'a', input: { session_id: 's1', message: 'hi' } })
  assert.is(first.status, 'completed', JSON.stringify(first.error))
  assert.equal(plain((await store.memoryGet('tea.session', 's1')).value), { history: ['hi'], session_id: 's1' })
  const second = await run(yaml, { store, runId: 'b', input: { session_id: 's1', message: 'again' } })
  assert.is(second.status, 'completed', JSON.stringify(second.error))
  assert.equal(plain(second.state.history), ['hi', 'again'])
  // Only persist_fields were kept: turns starts over.
  assert.is(second.state.turns, 1)
  // The starting state wins over the session's data.
  const third = await run(yaml, { store, runId: 'c', input: { session_id: 's1', message: 'x', history: [] } })
  assert.equal(plain(third.state.history), ['x'])
  // Without auto_save nothing is saved at the end, but the session is still read at the start.
  const reader = yaml.replace('auto_save: true', 'auto_save: false')
  const fourth = await run(reader, { store, runId: 'd', input: { session_id: 's1', message: 'y' } })
  assert.equal(plain(fourth.state.history), ['x', 'y'])
  assert.equal(plain((await store.memoryGet('tea.session', 's1')).value), { history: ['x'], session_id: 's1' })
})

test('without settings.session a session_id in the input is only a key', async () => {
  const store = createMemoryStore()
  await store.memoryPut('tea.session', 's2', { history: ['old'] })
  const r = await run(
    `name: plain
nodes:
  - name: n
    run: |
      return { seen: state.history ?? null }
`,
    { store, input: { session_id: 's2' } },
  )
  assert.is(r.state.seen, null)
})

test('settings.session is checked when the file loads', async () => {
  let failed: unknown
  try {
    await run(`name: s
settings:
  session: { backend: redis }
nodes:
  - name: save
    uses: session.save
`)
  } catch (e) {
    failed = e
  }
  assert.match(String(failed), /settings\.session\.backend/)
})

test.run()
