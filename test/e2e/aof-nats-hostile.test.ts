/**
 * Garbage another board (or anything with the bus's credentials) writes to the NATS task store, read back through
 * the CLI (security-probe-2 L): an event nested 30,000 deep, and a run file whose `$ref` names an object that is
 * not there. Neither may stop `tea aof events` or `tea aof lint`, or print a stack.
 */
import { jetstream } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { connect } from '@nats-io/transport-node'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openNatsStore } from '../../src/aof/store/nats/store.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'
import { tea } from './cli.ts'

const missing = natsServerMissing()
let server: NatsServer | undefined
const STACK = /^\s+at .+[:(]\d+/m

test.before(async () => {
  if (!missing) server = await startNatsServer()
})
test.after(async () => {
  await server?.cleanup()
})

skipIf(
  test,
  missing,
  'probe L: an event nested 30,000 deep is skipped as unreadable; tea aof events lists the others, with no stack',
  async () => {
    const project = `hostile_ev_${process.pid}`
    const store = await openNatsStore({ url: server!.url, project })
    const task = await store.create({ title: 'real', status: 'ready' })
    await store.close()
    const nc = await connect({ servers: server!.url })
    const deep = `{"type":"task.created","taskId":"${task.id}","payload":${'['.repeat(30_000)}${']'.repeat(30_000)}}`
    await jetstream(nc).publish(`${project}.events.task.created`, deep)
    await nc.close()
    const r = await tea(['aof', 'events', '--nats', server!.url], { env: { TEA_NATS_PROJECT: project } })
    assert.is(r.code, 0, r.stderr)
    assert.not.match(r.stderr, STACK)
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    assert.equal(
      events.map((e) => [e.type, e.taskId]),
      [['task.created', task.id]],
    )
  },
)

skipIf(test, missing, 'probe L: a run file whose $ref names a missing object is one lint problem; lint goes on and lists it', async () => {
  const project = `hostile_ref_${process.pid}`
  const store = await openNatsStore({ url: server!.url, project })
  const task = await store.create({ title: 'real', status: 'ready' })
  await store.close()
  const nc = await connect({ servers: server!.url })
  const runs = await new Kvm(jetstream(nc)).open(`${project}_runs`)
  await runs.put(`${task.id}.result`, `{"$ref": "obj://${project}_files/_big/0000", "size": 10, "sha256": "00"}`)
  await nc.close()
  const r = await tea(['aof', 'lint', '--nats', server!.url, '--json'], { env: { TEA_NATS_PROJECT: project } })
  assert.not.match(r.stderr, STACK)
  assert.is(r.code, 1, `${r.stdout}${r.stderr}`)
  const report = JSON.parse(r.stdout)
  const problems = (Array.isArray(report) ? report : report.problems) as Array<{ code: string; message: string; where: { file: string } }>
  assert.ok(
    problems.some(
      (p) =>
        p.code === 'unreadable_run_artifact' &&
        /missing from the object store/.test(p.message) &&
        p.where.file.endsWith(`/runs/${task.id}/run_result.json`),
    ),
    JSON.stringify(problems),
  )
})

test.run()
