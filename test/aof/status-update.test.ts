import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { getTask, routeMessage, workLogEntries } from '../../src/aof/index.ts'
import { T1, eventsOf, fixture, makeTask, statusUpdate, withFixture, type Fixture } from './helpers.ts'

type F = Fixture

const headings = (body: string) => body.split('\n').filter((l) => l.startsWith('## Work Log')).length

test(
  'AOF-BDD-55 Status update with explicit status field',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const out = await routeMessage(f.ctx, statusUpdate(T1, { status: 'blocked', blockers: ['Waiting on dependency'] }))
    assert.equal(out.transitions, [{ from: 'in-progress', to: 'blocked' }])
    assert.is((await getTask(f.ctx, T1))!.status, 'blocked')
    const last = eventsOf(f.ctx, 'task.transitioned', T1).at(-1)!
    assert.equal([last.from, last.to, last.reason], ['in-progress', 'blocked', 'Waiting on dependency'])
  }),
)

test(
  'AOF-BDD-56 Status update with progress only (no status field)',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, statusUpdate(T1, { progress: '75% complete, on track' }))
    const task = (await getTask(f.ctx, T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(workLogEntries(task.body), ['- 2026-02-10T10:00:30.000Z Progress: 75% complete, on track'])
  }),
)

test(
  'AOF-BDD-57 Status update with notes only',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, statusUpdate(T1, { notes: 'Encountered minor issue, resolved' }))
    const task = (await getTask(f.ctx, T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(workLogEntries(task.body), ['- 2026-02-10T10:00:30.000Z Notes: Encountered minor issue, resolved'])
  }),
)

test(
  'AOF-BDD-58 Status update with blockers only',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, statusUpdate(T1, { blockers: ['API rate limit', 'Test flake'] }))
    const task = (await getTask(f.ctx, T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(workLogEntries(task.body), ['- 2026-02-10T10:00:30.000Z Blockers: API rate limit, Test flake'])
  }),
)

test(
  'AOF-BDD-59 Status update creates Work Log section if missing',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, body: '## Instructions\nDo the thing.' })
    await routeMessage(f.ctx, statusUpdate(T1, { progress: 'Initial work started' }))
    const body = (await getTask(f.ctx, T1))!.body
    assert.is(body, '## Instructions\nDo the thing.\n\n## Work Log\n- 2026-02-10T10:00:30.000Z Progress: Initial work started')
  }),
)

test(
  'AOF-BDD-60 Status update appends to existing Work Log',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, body: '## Work Log\n- 2026-02-10T09:00:00.000Z Notes: first\n\n## Acceptance Criteria\n- works' })
    await routeMessage(f.ctx, statusUpdate(T1, { notes: 'Additional update' }))
    await routeMessage(f.ctx, statusUpdate(T1, { notes: 'Third' }, { sentAt: '2026-02-10T10:00:40.000Z' }))
    const body = (await getTask(f.ctx, T1))!.body
    assert.is(headings(body), 1)
    assert.equal(workLogEntries(body), [
      '- 2026-02-10T09:00:00.000Z Notes: first',
      '- 2026-02-10T10:00:30.000Z Notes: Additional update',
      '- 2026-02-10T10:00:40.000Z Notes: Third',
    ])
    assert.match(body, '## Acceptance Criteria\n- works')
  }),
)

test(
  'AOF-BDD-61 Idempotent status update - already in target status',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'blocked' })
    const before = eventsOf(f.ctx, 'task.transitioned', T1).length
    const out = await routeMessage(f.ctx, statusUpdate(T1, { status: 'blocked', progress: 'still waiting' }))
    assert.equal(out.transitions, [])
    assert.is(eventsOf(f.ctx, 'task.transitioned', T1).length, before)
    const task = (await getTask(f.ctx, T1))!
    assert.is(task.status, 'blocked')
    assert.equal(workLogEntries(task.body), ['- 2026-02-10T10:00:30.000Z Progress: still waiting'])
  }),
)

test(
  'a re-delivered status update does not append its Work Log entry twice',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const msg = statusUpdate(T1, { progress: 'half' })
    await routeMessage(f.ctx, msg)
    await routeMessage(f.ctx, msg)
    assert.is(workLogEntries((await getTask(f.ctx, T1))!.body).length, 1)
  }),
)

test(
  'a status the table does not allow is not applied, a warning says why, and the text is still logged',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const out = await routeMessage(f.ctx, statusUpdate(T1, { status: 'done', notes: 'skipping review' }))
    assert.equal(out.warnings, ['invalid_transition'])
    const task = (await getTask(f.ctx, T1))!
    assert.is(task.status, 'in-progress')
    assert.equal(eventsOf(f.ctx, 'protocol.message.warning', T1), [{ reason: 'invalid_transition', from: 'in-progress', to: 'done' }])
    assert.is(workLogEntries(task.body).length, 1)
  }),
)

test(
  'several reference-style Work Log headings are folded into one on the next append',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, body: '## Work Log\n- a\n\n## Work Log\n- b' })
    await routeMessage(f.ctx, statusUpdate(T1, { notes: 'c' }))
    const body = (await getTask(f.ctx, T1))!.body
    assert.is(headings(body), 1)
    assert.equal(workLogEntries(body), ['- a', '- b', '- 2026-02-10T10:00:30.000Z Notes: c'])
  }),
)

test(
  'a multi-line note stays one Work Log entry',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, statusUpdate(T1, { notes: 'line one\n## Not a heading\nline three' }))
    const body = (await getTask(f.ctx, T1))!.body
    assert.is(headings(body), 1)
    assert.equal(workLogEntries(body), ['- 2026-02-10T10:00:30.000Z Notes: line one ## Not a heading line three'])
  }),
)

test.run()
