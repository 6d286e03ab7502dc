/**
 * AOF-BDD scenarios of status updates (TASK-059 "Status Update Processing"): the optional transition and the Work
 * Log entry, kept in the task body on every store. Entries are stamped with the message's `sentAt`, which the test
 * chooses, so each line is known exactly. Run by bdd-contract.ts.
 */

import * as assert from 'uvu/assert'
import { routeOn } from '../../../src/aof/roles/router.ts'
import { workLogEntries } from '../../../src/aof/protocol/work-log.ts'
import { type BddSuite, eventsOf, given, lastMove, movesOf, sent, statusOf, withId } from './bdd-fixtures.ts'
import { T1, statusUpdate } from '../helpers.ts'

const headings = (body: string) => body.split('\n').filter((l) => l.startsWith('## Work Log')).length

export function statusCases(t: BddSuite): void {
  t('AOF-BDD-55 TASK-059 Status update with explicit status field', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(store, statusUpdate(T1, { status: 'blocked', blockers: ['Waiting on dependency'] }, await sent(store)))
    assert.equal(out.transitions, [{ from: 'in-progress', to: 'blocked' }])
    assert.is(await statusOf(store, T1), 'blocked')
    const last = await lastMove(store, T1)
    assert.equal([last?.from, last?.to, last?.reason], ['in-progress', 'blocked', 'Waiting on dependency'])
  })

  t('AOF-BDD-56 TASK-059 Status update with progress only (no status field)', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const { sentAt } = await sent(store)
    await routeOn(store, statusUpdate(T1, { progress: '75% complete, on track' }, { sentAt }))
    const task = (await store.get(T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(workLogEntries(task.body), [`- ${sentAt} Progress: 75% complete, on track`])
  })

  t('AOF-BDD-57 TASK-059 Status update with notes only', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const { sentAt } = await sent(store)
    await routeOn(store, statusUpdate(T1, { notes: 'Encountered minor issue, resolved' }, { sentAt }))
    const task = (await store.get(T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(workLogEntries(task.body), [`- ${sentAt} Notes: Encountered minor issue, resolved`])
  })

  t('AOF-BDD-58 TASK-059 Status update with blockers only', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const { sentAt } = await sent(store)
    await routeOn(store, statusUpdate(T1, { blockers: ['API rate limit', 'Test flake'] }, { sentAt }))
    const task = (await store.get(T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(workLogEntries(task.body), [`- ${sentAt} Blockers: API rate limit, Test flake`])
  })

  t('AOF-BDD-59 TASK-059 Status update creates Work Log section if missing', async ({ h }) => {
    const { store } = h
    await given(store, T1, { body: '## Instructions\nDo the thing.' })
    const { sentAt } = await sent(store)
    await routeOn(store, statusUpdate(T1, { progress: 'Initial work started' }, { sentAt }))
    const body = (await store.get(T1))!.body
    assert.is(body, `## Instructions\nDo the thing.\n\n## Work Log\n- ${sentAt} Progress: Initial work started`)
  })

  t('AOF-BDD-60 TASK-059 Status update appends to existing Work Log', async ({ h }) => {
    const { store } = h
    await given(store, T1, { body: '## Work Log\n- 2026-02-10T09:00:00.000Z Notes: first\n\n## Acceptance Criteria\n- works' })
    const one = await sent(store)
    const two = await sent(store, 10)
    await routeOn(store, statusUpdate(T1, { notes: 'Additional update' }, one))
    await routeOn(store, statusUpdate(T1, { notes: 'Third' }, two))
    const body = (await store.get(T1))!.body
    assert.is(headings(body), 1)
    assert.equal(workLogEntries(body), [
      '- 2026-02-10T09:00:00.000Z Notes: first',
      `- ${one.sentAt} Notes: Additional update`,
      `- ${two.sentAt} Notes: Third`,
    ])
    assert.match(body, '## Acceptance Criteria\n- works')
  })

  t('AOF-BDD-61 TASK-059 Idempotent status update - already in target status', async ({ h }) => {
    const { store } = h
    await given(store, T1, { status: 'blocked' })
    const before = await movesOf(store, T1)
    const { sentAt } = await sent(store)
    const out = await routeOn(store, statusUpdate(T1, { status: 'blocked', progress: 'still waiting' }, { sentAt }))
    assert.equal([out.outcome, out.transitions], ['accepted', []])
    assert.equal(await movesOf(store, T1), before)
    const task = (await store.get(T1))!
    assert.is(task.status, 'blocked')
    assert.equal(workLogEntries(task.body), [`- ${sentAt} Progress: still waiting`])
  })

  // --- edge cases beyond the BDD text ---

  t('a status update delivered again (a router that died before marking it) does not append its entry twice', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const msg = statusUpdate(T1, { progress: 'half' }, await sent(store))
    assert.is((await routeOn(store, withId(msg, 'update-1'))).outcome, 'accepted')
    assert.is((await routeOn(store, withId(msg, 'update-1-redelivered'))).outcome, 'accepted')
    assert.is(workLogEntries((await store.get(T1))!.body).length, 1)
  })

  t('a status the table does not allow is not applied, a warning says why, and the text is still logged', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const out = await routeOn(store, statusUpdate(T1, { status: 'done', notes: 'skipping review' }, await sent(store)))
    assert.equal([out.outcome, out.warnings, out.transitions], ['accepted', ['invalid_transition'], []])
    const task = (await store.get(T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(await eventsOf(store, 'protocol.message.warning', T1), [{ reason: 'invalid_transition', from: 'in-progress', to: 'done' }])
    assert.is(workLogEntries(task.body).length, 1)
  })

  t('several reference-style Work Log headings are folded into one on the next append', async ({ h }) => {
    const { store } = h
    await given(store, T1, { body: '## Work Log\n- a\n\n## Work Log\n- b' })
    const { sentAt } = await sent(store)
    await routeOn(store, statusUpdate(T1, { notes: 'c' }, { sentAt }))
    const body = (await store.get(T1))!.body
    assert.is(headings(body), 1)
    assert.equal(workLogEntries(body), ['- a', '- b', `- ${sentAt} Notes: c`])
  })

  t('a multi-line note stays one Work Log entry', async ({ h }) => {
    const { store } = h
    await given(store, T1)
    const { sentAt } = await sent(store)
    await routeOn(store, statusUpdate(T1, { notes: 'line one\n## Not a heading\nline three' }, { sentAt }))
    const body = (await store.get(T1))!.body
    assert.is(headings(body), 1)
    assert.equal(workLogEntries(body), [`- ${sentAt} Notes: line one ## Not a heading line three`])
  })
}
