/**
 * Values larger than the server's max_payload (docs/fleet.md, "Run artifacts and work logs"): a server configured
 * with `max_payload: 4096` refuses any larger message, so a task body, a run file, an event, a protocol message and
 * a companion file above it must go to the object store behind a `{"$ref"}` and read back whole.
 */

import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { connectNats } from '../../../../src/aof/store/nats/client.ts'
import { openNatsStore } from '../../../../src/aof/store/nats/store.ts'
import { routeOn } from '../../../../src/aof/roles/router.ts'
import type { TaskStore } from '../../../../src/aof/store/port.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../../../support/nats-server.ts'
import { skipIf } from '../../../support/skip.ts'
import { statusUpdate } from '../../helpers.ts'
import { tempDir } from '../../../support/temp-dir.ts'

const missing = natsServerMissing()
const dir = tempDir('tea-nats-payload-')
let server: NatsServer | undefined
let store: TaskStore | undefined
const project = `big${process.pid}`

test.before(async () => {
  if (missing) return
  const conf = join(dir, 'small.conf')
  writeFileSync(conf, 'max_payload: 4096\n')
  server = await startNatsServer(['-c', conf])
  store = await openNatsStore({ url: server.url, project })
})
test.after(async () => {
  await store?.close()
  await server?.cleanup()
  rmSync(dir, { recursive: true, force: true })
})

/** The raw KV value of `key` in `bucket`, as another client would see it. */
async function raw(bucket: string, key: string): Promise<string> {
  const c = await connectNats({ url: server!.url })
  try {
    const kv = await c.kvm.open(`${project}_${bucket}`)
    return (await kv.get(key))!.string()
  } finally {
    await c.nc.close()
  }
}

skipIf(test, missing, 'the server really limits messages to 4096 bytes, and the client reads that limit', async () => {
  const c = await connectNats({ url: server!.url })
  try {
    assert.is(c.maxPayload, 4096)
    let refused = ''
    await c.js.publish(`${project}.events.x`, new Uint8Array(5000)).catch((e) => (refused = String(e)))
    assert.match(refused, /max.payload|MAX_PAYLOAD|payload/i)
  } finally {
    await c.nc.close()
  }
})

skipIf(test, missing, 'a 50 KB task body is stored behind a reference and reads back whole; later moves keep it', async () => {
  const body = 'Sensor log.\n'.repeat(4_300).trimEnd()
  const task = await store!.create({ title: 'Big', body, status: 'ready', agent: 'swe' })
  const stored = JSON.parse(await raw('tasks', task.id))
  assert.match(stored.$ref, new RegExp(`^obj://${project}_files/_big/[0-9a-f]{64}$`))
  assert.is(stored.size > 50_000, true)
  assert.is((await store!.get(task.id))!.body, body)
  await store!.lease(task.id, 'swe')
  const moved = await store!.transition(task.id, 'review', { actor: 'swe' })
  assert.is(moved.status, 'review')
  assert.is((await store!.get(task.id))!.body, body)
  assert.equal(
    (await store!.list(['review'])).tasks.map((t) => t.body.length),
    [body.length],
  )
})

skipIf(test, missing, 'a large run file, event and protocol message are kept whole; a message sent twice is still one', async () => {
  const task = await store!.create({ title: 'Notes', status: 'ready', agent: 'swe-backend' })
  await store!.lease(task.id, 'swe-backend')
  const big = JSON.stringify({ taskId: task.id, notes: 'x'.repeat(9_000) })
  await store!.writeRunFile(task.id, 'run_result.json', big)
  assert.is(await store!.readRunFile(task.id, 'run_result.json'), big)
  assert.match(await raw('runs', `${task.id}.result`), '"$ref"')

  const payload = { detail: 'y'.repeat(8_000) }
  const [event] = await store!.appendEvents([{ type: 'test.big', actor: 'test', taskId: task.id, payload }])
  assert.equal(await store!.readEvents({ type: 'test.big' }), [event])

  // A status update whose notes (10,000 characters, the schema's limit) make the message larger than 4096 bytes.
  const sentAt = new Date((await store!.now()).getTime() + 1).toISOString()
  const msg = statusUpdate(task.id, { notes: 'z'.repeat(10_000) }, { sentAt })
  assert.is((await routeOn(store!, msg)).outcome, 'accepted')
  assert.match((await store!.get(task.id))!.body, 'z'.repeat(10_000))
  assert.equal(await routeOn(store!, msg), { outcome: 'ignored', reason: 'duplicate', taskId: task.id, type: 'status.update' })
})

skipIf(test, missing, 'a 300 KB companion file is split below the limit and reads back byte for byte', async () => {
  const task = await store!.create({ title: 'Files', status: 'ready' })
  const bytes = new Uint8Array(300_000).map((_, i) => (i * 31) % 251)
  await store!.writeFile(task.id, 'outputs/capture.bin', bytes)
  const back = await store!.readFile(task.id, 'outputs/capture.bin')
  assert.ok(back && Buffer.from(back).equals(Buffer.from(bytes)))
})

test.run()
