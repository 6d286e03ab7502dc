/**
 * `tea aof …` on the JetStream store (`--nats URL` or `TEA_NATS_URL`), in-process against a real nats-server: the
 * task commands, then every other command (init, lease, heartbeat, send, session-end, events, lint); and the
 * one-line failures when the server is not there or a NATS flag comes without a server.
 */

import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryIo } from '../../src/cli/io.ts'
import { main } from '../../src/cli/main.ts'
import { natsServerForFile, natsServerMissing } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'

const missing = natsServerMissing()
const dir = tempDir('tea-aof-nats-cli-')

async function run(argv: string[], env: Record<string, string> = {}) {
  const io = memoryIo({ cwd: dir, env: { TEA_NATS_PROJECT: `cli${process.pid}`, ...env } })
  const code = await main(['aof', 'task', ...argv], io)
  return { code, out: io.stdout, err: io.stderr }
}

async function aof(argv: string[], options: { env?: Record<string, string>; stdin?: string } = {}) {
  const io = memoryIo({
    cwd: dir,
    env: { TEA_NATS_PROJECT: `cmd${process.pid}`, ...options.env },
    ...(options.stdin ? { stdin: options.stdin } : {}),
  })
  const code = await main(['aof', ...argv], io)
  return { code, out: io.stdout, err: io.stderr }
}

const natsFile = natsServerForFile(test, missing, dir)

skipIf(test, missing, 'create, list, show and move a task with --nats; TEA_NATS_URL does the same; the data dir stays empty', async () => {
  const url = natsFile.server.url
  const created = await run(['create', '--title', 'Calibrate', '--status', 'ready', '--agent', 'swe', '--nats', url])
  assert.is(created.code, 0, created.err)
  const id = created.out.trim()
  const listed = await run(['list', '--json'], { TEA_NATS_URL: url })
  assert.equal(
    JSON.parse(listed.out).map((r: { id: string; status: string; agent: string }) => [r.id, r.status, r.agent]),
    [[id, 'ready', 'swe']],
  )
  const shown = await run(['show', id, '--nats', url])
  assert.is(shown.code, 0)
  assert.match(shown.out, `id: ${id}`)
  assert.match(shown.out, 'status: ready')
  const moved = await run(['move', id, 'blocked', '--reason', 'waiting', '--nats', url])
  assert.is(moved.out, `${id}: ready -> blocked\n`)
  const refused = await run(['move', id, 'done', '--nats', url])
  assert.is(refused.code, 1)
  assert.match(refused.err, 'cannot move from blocked to done')
  // Nothing went to the filesystem store.
  assert.is((await run(['list'], {})).out, '')
})

skipIf(test, missing, 'init, lease, heartbeat, send, session-end, events and lint on NATS: the same JSON as on the data dir', async () => {
  const nats = ['--nats', natsFile.server.url]
  const init = await aof(['init', ...nats])
  assert.is(init.code, 0, init.err)
  const p = `cmd${process.pid}`
  assert.is(
    init.out,
    `initialized ${natsFile.server.url}/${p}: KV buckets ${p}_tasks and ${p}_runs, object store ${p}_files, stream ${p}_events\n`,
  )
  const id = (await aof(['task', 'create', '--title', 'Calibrate', '--status', 'ready', '--agent', 'swe-backend', ...nats])).out.trim()

  const lease = await aof(['lease', id, '--agent', 'swe-backend', ...nats])
  assert.is(lease.code, 0, lease.err)
  const leased = JSON.parse(lease.out)
  assert.equal([leased.taskId, leased.status, leased.lease.agent, leased.renewed], [id, 'in-progress', 'swe-backend', false])
  const taken = await aof(['lease', id, '--agent', 'someone-else', ...nats])
  assert.is(taken.code, 1)
  assert.match(taken.err, `task ${id} is leased to swe-backend`)

  const beat = JSON.parse((await aof(['heartbeat', id, '--agent', 'swe-backend', ...nats])).out)
  assert.equal([beat.taskId, beat.runId, beat.beatCount], [id, leased.runId, 1])

  const sentAt = new Date(Date.now() + 1_000).toISOString()
  const update = {
    protocol: 'aof',
    version: 1,
    type: 'status.update',
    taskId: id,
    fromAgent: 'swe-backend',
    toAgent: 'orchestrator',
    sentAt,
  }
  const file = join(dir, 'update.json')
  writeFileSync(file, JSON.stringify({ ...update, payload: { taskId: id, agentId: 'swe-backend', progress: 'calibrated' } }))
  const sent = await aof(['send', file, ...nats])
  assert.equal(JSON.parse(sent.out), { outcome: 'accepted', taskId: id, type: 'status.update', transitions: [] })
  const again = await aof(['send', file, ...nats])
  assert.equal(JSON.parse(again.out), { outcome: 'ignored', reason: 'duplicate', taskId: id, type: 'status.update' })
  const report = {
    ...update,
    type: 'completion.report',
    payload: { outcome: 'done', summaryRef: '', notes: 'ok', tests: { total: 1, passed: 1, failed: 0 } },
  }
  const viaStdin = await aof(['send', '-', ...nats], { stdin: `AOF/1 ${JSON.stringify(report)}` })
  assert.equal(JSON.parse(viaStdin.out).transitions, [{ from: 'in-progress', to: 'review' }])
  assert.match((await aof(['task', 'show', id, ...nats])).out, 'Progress: calibrated')

  // Nothing is left for session end: the report completed the run.
  assert.equal(JSON.parse((await aof(['session-end', ...nats])).out), [])
  const events = (await aof(['events', '--task', id, ...nats])).out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).type)
  assert.equal(events.filter((t) => t === 'task.transitioned').length, 2)
  assert.ok(events.includes('lease.acquired') && events.includes('task.completed'), events.join(' '))
  const onlyMoves = (await aof(['events', '--type', 'task.transitioned', '--task', id, ...nats])).out.trim().split('\n')
  assert.is(onlyMoves.length, 2)

  const lint = await aof(['lint', ...nats])
  assert.equal([lint.code, lint.out], [0, 'OK: no problems\n'])
  // Nothing went to the data dir.
  assert.is((await aof(['events'])).out, '')
})

skipIf(test, missing, 'lint on NATS names a foreign entry by its key and exits 1', async () => {
  const project = `lint${process.pid}`
  const env = { TEA_NATS_PROJECT: project, TEA_NATS_URL: natsFile.server.url }
  assert.is((await aof(['init'], { env })).code, 0)
  const { connectNats } = await import('../../src/aof/store/nats/client.ts')
  const c = await connectNats({ url: natsFile.server.url })
  await (await c.kvm.open(`${project}_tasks`)).put('TASK-2026-02-09-001', 'not a task at all')
  await c.nc.close()
  const lint = await aof(['lint', '--json'], { env })
  assert.is(lint.code, 1)
  const problems = JSON.parse(lint.out)
  assert.equal(
    problems.map((p: { code: string; where: { file: string } }) => [p.code, p.where.file]),
    [['unreadable_task', `${natsFile.server.url}/${project}/tasks/TASK-2026-02-09-001`]],
  )
})

test('a NATS flag without a NATS server is refused in one line (exit 2), not silently ignored', async () => {
  const r = await aof(['events', '--nats-tls-ca', 'ca.pem'])
  assert.is(r.code, 2)
  assert.match(r.err, '--nats-tls-ca is for a NATS store: give --nats URL (or set TEA_NATS_URL) with it')
})

test('an unreachable server: exit 1 and one line naming the URL', async () => {
  const r = await run(['list', '--nats', 'nats://127.0.0.1:1'])
  assert.is(r.code, 1)
  assert.match(r.err, 'cannot reach NATS at nats://127.0.0.1:1: connection refused')
  assert.is(r.err.trim().split('\n').length, 1, r.err)
})

test.run()
