/**
 * The router and the rest of the port on any task store (docs/fleet.md, STYLE.md point 10): AOF/1 message routing
 * (`routeOn`), session end, lint, and what export/import rely on (tasks and events written as they are, run files,
 * companion files). `route-fs.test.ts` runs it on the filesystem store, `nats/route.test.ts` on JetStream against a
 * real nats-server. Messages are stamped by the store's clock, so a report is never older than the run it closes.
 */

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { lintStore } from '../../src/aof/lint-store.ts'
import { routeOn } from '../../src/aof/router.ts'
import { readRunResultOn } from '../../src/aof/run-files.ts'
import { sessionEndOn } from '../../src/aof/session-end-on.ts'
import type { TaskStore } from '../../src/aof/store-port.ts'
import { isTeaError } from '../../src/core/errors.ts'
import { completion, envelope, handoff, statusUpdate } from './helpers.ts'
import type { StoreHandle } from './store-contract.ts'

const AGENT = 'swe-backend'

async function leased(store: TaskStore, agent = AGENT) {
  const task = await store.create({ title: 'Calibrate', status: 'ready', agent })
  const { run } = await store.lease(task.id, agent)
  return { id: task.id, runId: run.runId! }
}

async function at(store: TaskStore): Promise<{ sentAt: string }> {
  return { sentAt: new Date((await store.now()).getTime() + 1).toISOString() }
}

async function types(store: TaskStore, taskId: string, type?: string): Promise<string[]> {
  return (await store.readEvents({ taskId, ...(type ? { type } : {}) })).map((e) => e.type)
}

const text = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('utf8') : undefined)

export function routeContract(name: string, open: () => Promise<StoreHandle>, teardown?: () => Promise<void>): void {
  const t = suite<{ h: StoreHandle }>(`router and files contract: ${name}`)
  if (teardown) t.after(teardown)
  t.before.each(async (ctx) => {
    ctx.h = await open()
  })
  t.after.each(async (ctx) => {
    await ctx.h.cleanup()
  })

  t(
    'AOF-BDD-31 a completion.report of the lease holder moves the task to review, writes the result for its run and completes the run',
    async ({ h }) => {
      const { store } = h
      const { id, runId } = await leased(store)
      await store.writeFile(id, 'outputs/summary.md', new TextEncoder().encode('# done'))
      const out = await routeOn(store, completion(id, {}, await at(store)))
      assert.equal(out, {
        outcome: 'accepted',
        taskId: id,
        type: 'completion.report',
        transitions: [{ from: 'in-progress', to: 'review' }],
      })
      assert.is((await store.get(id))!.status, 'review')
      const result = await readRunResultOn(store, id)
      assert.is(result?.runId, runId)
      assert.is(result?.outcome, 'done')
      assert.is((await store.readRun(id))!.status, 'completed')
      assert.equal(await types(store, id, 'protocol.message.received'), ['protocol.message.received'])
      assert.equal(await types(store, id, 'task.completed'), ['task.completed'])
    },
  )

  t('AOF-BDD-32 a status.update moves the task and appends its Work Log entry', async ({ h }) => {
    const { store } = h
    const { id } = await leased(store)
    const out = await routeOn(
      store,
      statusUpdate(id, { status: 'blocked', progress: 'half way', blockers: ['no sensor'] }, await at(store)),
    )
    assert.equal(out.transitions, [{ from: 'in-progress', to: 'blocked' }])
    const task = (await store.get(id))!
    assert.is(task.status, 'blocked')
    assert.match(task.body, 'Progress: half way')
    assert.match(task.body, 'no sensor')
  })

  t('AOF-BDD-33 a handoff.request routes the child to the delegate and leaves inputs/handoff.json and .md with it', async ({ h }) => {
    const { store } = h
    const parent = await leased(store)
    const child = await store.create({ title: 'Test it', status: 'ready', agent: AGENT })
    const out = await routeOn(store, handoff(child.id, parent.id, {}, await at(store)))
    assert.is(out.outcome, 'accepted', JSON.stringify(out))
    const got = (await store.get(child.id))!
    assert.equal((got.data.routing as { agent: string }).agent, 'swe-qa')
    assert.is((got.data.metadata as { delegationDepth: number }).delegationDepth, 1)
    assert.equal(await store.listFiles(child.id), ['inputs/handoff.json', 'inputs/handoff.md'])
    assert.is(JSON.parse(text(await store.readFile(child.id, 'inputs/handoff.json'))!).parentTaskId, parent.id)
    assert.match(text(await store.readFile(child.id, 'inputs/handoff.md'))!, `# Handoff: ${child.id}`)
  })

  t('AOF-BDD-35 a handoff.rejected from the delegate blocks the child', async ({ h }) => {
    const { store } = h
    const { id } = await leased(store, 'swe-qa')
    const msg = envelope(
      'handoff.rejected',
      id,
      { taskId: id, accepted: false, reason: 'no capacity' },
      { fromAgent: 'swe-qa', ...(await at(store)) },
    )
    const out = await routeOn(store, msg)
    assert.equal(out.transitions, [{ from: 'in-progress', to: 'blocked' }])
    assert.is((await store.get(id))!.status, 'blocked')
    assert.equal(await types(store, id, 'delegation.rejected'), ['delegation.rejected'])
  })

  t('a report from another agent, and one sent before the current run began, are rejected and move nothing', async ({ h }) => {
    const { store } = h
    const { id } = await leased(store)
    const other = await routeOn(store, completion(id, {}, { fromAgent: 'intruder', ...(await at(store)) }))
    assert.equal([other.outcome, other.reason], ['rejected', 'unauthorized_agent'])
    const stale = await routeOn(store, completion(id, {}, { sentAt: '2020-01-01T00:00:00.000Z' }))
    assert.equal([stale.outcome, stale.reason], ['rejected', 'stale_run'])
    assert.is((await store.get(id))!.status, 'in-progress')
    assert.equal(await types(store, id, 'protocol.message.rejected'), ['protocol.message.rejected', 'protocol.message.rejected'])
  })

  t('the same completion report sent twice is applied once: one move to review, one result', async ({ h }) => {
    const { store } = h
    const { id } = await leased(store)
    const msg = completion(id, { summaryRef: '' }, await at(store))
    assert.is((await routeOn(store, msg)).outcome, 'accepted')
    const again = await routeOn(store, msg)
    // The filesystem routes it again and finds nothing left to do; NATS recognises the message id and skips it.
    assert.ok(again.outcome === 'ignored' ? again.reason === 'duplicate' : again.transitions?.length === 0, JSON.stringify(again))
    const moves = (await store.readEvents({ taskId: id, type: 'task.transitioned' })).map((e) => e.payload.to)
    assert.equal(moves, ['in-progress', 'review'])
  })

  t('status updates routed at once through two handles all land: no Work Log entry is lost to a race', async ({ h }) => {
    const { store } = h
    const { id } = await leased(store)
    const second = await h.other()
    const stamp = await at(store)
    const sends = Array.from({ length: 6 }, (_, i) => routeOn(i % 2 ? second : store, statusUpdate(id, { progress: `step ${i}` }, stamp)))
    const outs = await Promise.all(sends)
    assert.equal(
      outs.map((o) => o.outcome),
      Array(6).fill('accepted'),
    )
    const body = (await store.get(id))!.body
    for (let i = 0; i < 6; i++) assert.match(body, `Progress: step ${i}`)
  })

  t('session end applies a result written for the current run, sets aside one from an earlier run', async ({ h }) => {
    const { store } = h
    const current = await leased(store)
    const earlier = await leased(store)
    const result = (taskId: string, runId: string, outcome: string) =>
      JSON.stringify({ taskId, agentId: AGENT, runId, completedAt: new Date().toISOString(), outcome })
    await store.writeRunFile(current.id, 'run_result.json', result(current.id, current.runId, 'blocked'))
    await store.writeRunFile(earlier.id, 'run_result.json', result(earlier.id, 'OLD-RUN', 'done'))
    const entries = await sessionEndOn(store)
    assert.equal(entries, [{ taskId: current.id, outcome: 'blocked', transitions: [{ from: 'in-progress', to: 'blocked' }] }])
    assert.is((await store.get(current.id))!.status, 'blocked')
    assert.is((await store.readRun(current.id))!.status, 'completed')
    assert.is((await store.get(earlier.id))!.status, 'in-progress')
    assert.is(await store.readRunFile(earlier.id, 'run_result.json'), undefined)
    assert.match((await store.readRunFile(earlier.id, 'previous_run_result.json'))!, 'OLD-RUN')
  })

  t('a task written as it is: created, then the same, an older copy kept out, a newer one replacing it', async ({ h }) => {
    const { store } = h
    const source = await store.create({ title: 'Copied', status: 'ready' })
    // The same task under an id the store has not seen, written through a second handle as an import would be.
    const target = await h.other()
    const id = source.id.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'))
    const copy = { ...source, id, data: { ...source.data, id } }
    assert.is(await target.putTask(copy), 'created')
    assert.is(await target.putTask(copy), 'same')
    const older = { ...copy, data: { ...copy.data, updatedAt: '2020-01-01T00:00:00.000Z', title: 'older' } }
    assert.is(await target.putTask(older), 'kept')
    const newer = { ...copy, status: 'blocked' as const, data: { ...copy.data, updatedAt: '2099-01-01T00:00:00.000Z', title: 'newer' } }
    assert.is(await target.putTask(newer), 'replaced')
    const got = (await target.get(copy.id))!
    assert.equal([got.status, got.data.title], ['blocked', 'newer'])
    assert.equal(
      (await target.list(['ready'])).tasks.map((x) => x.id),
      [source.id],
    )
  })

  t('events imported keep their ids and times, and an event already held is not added again', async ({ h }) => {
    const { store } = h
    const events = [
      { eventId: 'E-imported-1', type: 'task.note', timestamp: '2026-01-02T03:04:05.000Z', actor: 'old-board', payload: { n: 1 } },
      { eventId: 'E-imported-2', type: 'task.note', timestamp: '2026-01-03T03:04:05.000Z', actor: 'old-board', payload: { n: 2 } },
    ]
    assert.is(await store.importEvents(events), 2)
    assert.is(await store.importEvents(events), 0)
    assert.equal(await store.readEvents({ type: 'task.note' }), events)
  })

  t('run files and companion files: written, read back byte for byte, listed; paths that leave the folder refused', async ({ h }) => {
    const { store } = h
    const { id } = await store.create({ title: 'Files', status: 'ready' })
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7) % 256)
    await store.writeFile(id, 'outputs/data/blob.bin', bytes)
    await store.writeFile(id, 'inputs/a.txt', new TextEncoder().encode('a'))
    assert.equal(await store.listFiles(id), ['inputs/a.txt', 'outputs/data/blob.bin'])
    assert.ok(Buffer.from((await store.readFile(id, 'outputs/data/blob.bin'))!).equals(Buffer.from(bytes)))
    assert.is(await store.readFile(id, 'outputs/none.txt'), undefined)
    for (const bad of ['../escape.txt', '/etc/passwd', 'inputs/../../x']) {
      let code = 'no error'
      await store.writeFile(id, bad, bytes).catch((e) => (code = isTeaError(e) ? e.code : String(e)))
      assert.is(code, 'AOF_INVALID', bad)
    }
    await store.writeRunFile(id, 'run_result.json', '{"x":1}')
    assert.is(await store.readRunFile(id, 'run_result.json'), '{"x":1}')
    await store.writeRunFile(id, 'run_result.json', undefined)
    assert.is(await store.readRunFile(id, 'run_result.json'), undefined)
  })

  t('lint on the store: a lease on a task that is not in progress, an offset timestamp and a run file that is not JSON', async ({ h }) => {
    const { store } = h
    const clean = await store.create({ title: 'Clean', status: 'ready' })
    const bad = await store.create({ title: 'Bad', status: 'ready' })
    const lease = { agent: 'x', acquiredAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T01:00:00.000Z', renewCount: 0 }
    await store.putTask({
      ...bad,
      data: { ...bad.data, lease, createdAt: '2026-01-01T00:00:00+02:00', updatedAt: '2099-01-01T00:00:00.000Z' },
    })
    await store.writeRunFile(bad.id, 'run.json', '{torn')
    const problems = await lintStore(store)
    assert.equal(problems.map((p) => p.code).sort(), ['lease_not_in_progress', 'timestamp_offset', 'unreadable_run_artifact'])
    assert.ok(problems.every((p) => p.where.file.includes(bad.id) && !p.where.file.includes(clean.id)))
  })

  t('lint on the store: a task moved without its event (the writer died between the two) is a history gap', async ({ h }) => {
    const { store } = h
    const task = await store.create({ title: 'Moved quietly', status: 'ready' })
    await store.transition(task.id, 'blocked', { actor: 'test' })
    assert.equal(await lintStore(store), [])
    // What a board that died after its compare-and-set leaves: the entry moved on, no event says so.
    const now = (await store.get(task.id))!
    await store.putTask({ ...now, status: 'cancelled', data: { ...now.data, status: 'cancelled', updatedAt: '2099-01-01T00:00:00.000Z' } })
    const problems = await lintStore(store)
    assert.equal(
      problems.map((p) => [p.code, p.message]),
      [['history_gap', 'is cancelled but its events leave it blocked: a move was not logged (the board died between the two)']],
    )
  })

  t.run()
}
