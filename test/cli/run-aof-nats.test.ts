/**
 * `tea run --nats URL`: an agent's `aof.*` actions route on the JetStream store instead of the data dir's folders
 * (the run's checkpoints stay in the data dir), against a real nats-server; the store is opened by the first
 * message, so a run that sends none never connects.
 */

import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openNatsStore } from '../../src/aof/store/nats/store.ts'
import { workLogEntries } from '../../src/aof/protocol/work-log.ts'
import { memoryIo } from '../../src/cli/io.ts'
import { main } from '../../src/cli/main.ts'
import { natsServerForFile, natsServerMissing } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'

const missing = natsServerMissing()
const dir = tempDir('tea-run-aof-nats-')
const project = `run${process.pid}`

const REPORTER = `
name: reporter
nodes:
  - name: progress
    uses: aof.status
    with: { progress: halfway }
  - name: report
    uses: aof.report
    with: { outcome: needs_review, notes: looks good }
`

const QUIET = `
name: quiet
nodes:
  - name: add
    run: "return { x: 1 }"
`

async function run(agent: string, argv: string[]) {
  const file = join(dir, `${agent.match(/name: (\w+)/)![1]}.yaml`)
  writeFileSync(file, agent)
  const io = memoryIo({ cwd: dir, env: { TEA_NATS_PROJECT: project } })
  const code = await main(['run', file, '-q', '--data-dir', join(dir, 'data'), ...argv], io)
  return { code, out: io.stdout, err: io.stderr }
}

const natsFile = natsServerForFile(test, missing, dir)

skipIf(test, missing, 'an agent reports through aof.status and aof.report on a NATS store: the task moves to review there', async () => {
  const store = await openNatsStore({ url: natsFile.server.url, project })
  try {
    const task = await store.create({ title: 'Calibrate', status: 'ready', agent: 'swe' })
    const { run: aofRun } = await store.lease(task.id, 'swe')
    await store.writeFile(task.id, 'outputs/summary.md', new TextEncoder().encode('# Summary\n'))
    const r = await run(REPORTER, ['--nats', natsFile.server.url, '-i', JSON.stringify({ task: { id: task.id }, agent_id: 'swe' })])
    assert.is(r.code, 0, r.err)
    const state = JSON.parse(r.out)
    assert.equal([state.aof.outcome, state.aof.taskId, state.aof.type], ['accepted', task.id, 'completion.report'])
    const after = (await store.get(task.id))!
    assert.is(after.status, 'review')
    assert.equal(
      workLogEntries(after.body).map((e) => e.replace(/^- \S+ /, '')),
      ['Progress: halfway'],
    )
    const result = JSON.parse((await store.readRunFile(task.id, 'run_result.json'))!)
    assert.equal([result.runId, result.outcome, result.notes], [aofRun.runId, 'needs_review', 'looks good'])
    // Both messages are on the stream, marked as routed by their sender: a router service would only ack them.
    const queue = await store.routerQueue()
    const seen = [await queue.next(1000), await queue.next(1000)]
    assert.equal(
      seen.map((m) => [m?.type, m?.routedBySender]),
      [
        ['status.update', true],
        ['completion.report', true],
      ],
    )
    for (const m of seen) await m!.ack()
    // Nothing was routed on the data dir's folders.
    assert.not.ok(existsSync(join(dir, 'data', 'tasks')))
  } finally {
    await store.close()
  }
})

const PROGRESS = `
name: progress
nodes:
  - name: progress
    uses: aof.status
    with: { progress: halfway }
`

skipIf(
  test,
  missing,
  "tea worker --nats: the agent's aof.* messages go to the server the worker claims from, not the data dir",
  async () => {
    const store = await openNatsStore({ url: natsFile.server.url, project })
    try {
      const task = await store.create({ title: 'Calibrate', status: 'ready', agent: 'swe' })
      const file = join(dir, 'progress.yaml')
      writeFileSync(file, PROGRESS)
      const io = memoryIo({ cwd: dir, env: { TEA_NATS_PROJECT: project } })
      const argv = [
        'worker',
        '--agent-id',
        'swe',
        '--agent',
        file,
        '--once',
        '--data-dir',
        join(dir, 'board'),
        '--nats',
        natsFile.server.url,
      ]
      const code = await main(argv, io)
      assert.is(code, 0, io.stderr)
      const after = (await store.get(task.id))!
      assert.is(after.status, 'review')
      assert.ok(
        workLogEntries(after.body).some((e) => e.endsWith('Progress: halfway')),
        `the agent's status update is in the task's Work Log on NATS: ${after.body}`,
      )
      assert.not.ok(existsSync(join(dir, 'board', 'tasks')), "nothing was routed on the board's folders")
    } finally {
      await store.close()
    }
  },
)

skipIf(test, missing, 'a run that sends no AOF message never connects; one that does names the unreachable server', async () => {
  const dead = 'nats://127.0.0.1:1'
  const quiet = await run(QUIET, ['--nats', dead, '--nats-timeout-ms', '1000'])
  assert.is(quiet.code, 0, quiet.err)
  assert.equal(JSON.parse(quiet.out), { x: 1 })
  const loud = await run(REPORTER, ['--nats', dead, '--nats-timeout-ms', '1000', '-i', '{"taskId":"TASK-2026-11-25-001","agent_id":"swe"}'])
  assert.is(loud.code, 1)
  assert.match(loud.err, 'cannot reach NATS at nats://127.0.0.1:1: connection refused')
  const stray = await run(QUIET, ['--nats-creds', 'x.creds'])
  assert.is(stray.code, 2)
  assert.match(stray.err, '--nats-creds is for a NATS store')
})

test.run()
