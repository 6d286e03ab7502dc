/**
 * The router and the rest of the port on any task store (docs/fleet.md, STYLE.md point 10), beyond the AOF-BDD
 * scenarios and their edge cases (which bdd-contract.ts runs on every store): concurrent routing through two
 * handles, lint, and what export/import rely on (tasks and events written as they are, run files, companion files).
 * `route-fs.test.ts` runs it on the filesystem store, `nats/route.test.ts` on JetStream against a real nats-server.
 * Messages are stamped by the store's clock, so a report is never older than the run it closes.
 */

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { lintStore } from '../../../src/aof/roles/lint-store.ts'
import { routeOn } from '../../../src/aof/roles/router.ts'
import type { TaskStore } from '../../../src/aof/store/port.ts'
import { isTeaError } from '../../../src/core/errors.ts'
import { statusUpdate } from '../helpers.ts'
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

export function routeContract(name: string, open: () => Promise<StoreHandle>, teardown?: () => Promise<void>): void {
  const t = suite<{ h: StoreHandle }>(`router and files contract: ${name}`)
  if (teardown) t.after(teardown)
  t.before.each(async (ctx) => {
    ctx.h = await open()
  })
  t.after.each(async (ctx) => {
    await ctx.h.cleanup()
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
