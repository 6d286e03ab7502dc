/**
 * Issue 15: run artifacts in the folder the reference implementation reads (`state/runs/<ID>/`), tea's old
 * `runs/<ID>/` read and moved, and runs the reference started (no `runId`) handled like ours. The reference's files
 * are written here by hand, in the shape its `writeRunArtifact` / `writeHeartbeat` / `completeRunArtifact` produce.
 */

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  acquireLease,
  getTask,
  handleSessionEnd,
  heartbeat,
  initDataDir,
  lintDataDir,
  poll,
  readRun,
  readRunResult,
  routeMessage,
  transitionTask,
} from '../../../../src/aof/index.ts'
import { T1, T2, T3, completion, makeTask, withFixture, type Fixture } from '../../helpers.ts'

const runDir = (f: Fixture, id: string) => join(f.dir, 'state', 'runs', id)
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'))

/** The task as the reference's `acquireLease` leaves it: lease in the frontmatter, run.json and heartbeat with no runId. */
async function referenceLeased(f: Fixture, id: string, agent = 'swe-backend'): Promise<void> {
  await makeTask(f.ctx, { id, agent })
  const now = f.ctx.now().toISOString()
  const run = {
    taskId: id,
    agentId: agent,
    startedAt: now,
    status: 'running',
    artifactPaths: { inputs: 'inputs/', work: 'work/', output: 'output/' },
    metadata: {},
  }
  writeFileSync(join(runDir(f, id), 'run.json'), JSON.stringify(run, null, 2))
  const hb = { taskId: id, agentId: agent, lastHeartbeat: now, beatCount: 0, expiresAt: new Date(Date.parse(now) + 300_000).toISOString() }
  writeFileSync(join(runDir(f, id), 'run_heartbeat.json'), JSON.stringify(hb, null, 2))
}

test(
  'a lease writes run.json, the heartbeat and (after a report) the result under state/runs/<ID>/, with runId kept in metadata too',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const run = readJson(join(runDir(f, T1), 'run.json'))
    assert.type(run.runId, 'string')
    assert.is(run.metadata.runId, run.runId)
    assert.ok(existsSync(join(runDir(f, T1), 'run_heartbeat.json')))
    assert.not.ok(existsSync(join(f.dir, 'runs')))
    await routeMessage(f.ctx, completion(T1))
    const result = readJson(join(runDir(f, T1), 'run_result.json'))
    // Every key the reference's RunResult schema requires, so its readRunResult can read ours.
    assert.equal(
      [result.summaryRef, result.handoffRef, result.tests, result.notes, result.runId],
      ['outputs/summary.md', 'outputs/handoff.md', { total: 10, passed: 8, failed: 2 }, 'finished', run.runId],
    )
    assert.is(readJson(join(runDir(f, T1), 'run.json')).status, 'completed')
  }),
)

test(
  'a heartbeat from the lease holder keeps a run the reference started alive (it was refused 33/33)',
  withFixture(async (f) => {
    await referenceLeased(f, T1)
    f.advance(60_000)
    const hb = await heartbeat(f.ctx, T1, 'swe-backend')
    assert.is(hb.beatCount, 1)
    assert.is(hb.runId, undefined)
    assert.is(readJson(join(runDir(f, T1), 'run_heartbeat.json')).lastHeartbeat, f.ctx.now().toISOString())
  }),
)

test(
  "a tea completion report on a run the reference started completes that run's run.json",
  withFixture(async (f) => {
    await referenceLeased(f, T1)
    f.advance(1_000)
    const out = await routeMessage(f.ctx, completion(T1, {}, { sentAt: f.ctx.now().toISOString() }))
    assert.is(out.outcome, 'accepted')
    const run = readJson(join(runDir(f, T1), 'run.json'))
    assert.is(run.status, 'completed')
    assert.is(readJson(join(runDir(f, T1), 'run_result.json')).outcome, 'done')
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
  }),
)

test(
  "a poll reclaim marks a reference run's run.json failed",
  withFixture(async (f) => {
    await referenceLeased(f, T1)
    f.advance(301_000)
    const r = await poll(f.ctx)
    assert.is(r.actions[0]?.resolution, 'reclaimed')
    const run = readJson(join(runDir(f, T1), 'run.json'))
    assert.equal([run.status, run.metadata.expiredReason], ['failed', 'stale_heartbeat'])
  }),
)

test(
  "tea's run id survives the reference completing the run (it rewrites run.json without unknown top-level keys)",
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const path = join(runDir(f, T1), 'run.json')
    const { runId, ...rest } = readJson(path)
    writeFileSync(
      path,
      JSON.stringify({ ...rest, status: 'completed', metadata: { ...rest.metadata, completedAt: rest.startedAt } }, null, 2),
    )
    assert.is(readRun(f.ctx, T1)?.runId, runId)
  }),
)

test(
  "a new tea run sets an earlier run's result aside, so the reference's session end cannot apply it (interop C5)",
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await routeMessage(f.ctx, completion(T1, { outcome: 'blocked', blockers: ['x'] }))
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    f.advance(60_000)
    await acquireLease(f.ctx, T1, 'swe-backend')
    // What the reference's handleSessionEnd reads: nothing, so the new run stays in progress.
    assert.not.ok(existsSync(join(runDir(f, T1), 'run_result.json')))
    assert.is(readJson(join(runDir(f, T1), 'previous_run_result.json')).outcome, 'blocked')
    assert.is(readRunResult(f.ctx, T1), undefined)
    assert.equal(await handleSessionEnd(f.ctx), [])
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
  }),
)

test(
  "tea's old runs/<ID>/ is read, moved to state/runs/ by the next write, and moved for every task by init",
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2 })
    await makeTask(f.ctx, { id: T3, status: 'ready' })
    mkdirSync(join(f.dir, 'runs'))
    for (const id of [T1, T2]) renameSync(runDir(f, id), join(f.dir, 'runs', id))
    const before = readJson(join(f.dir, 'runs', T1, 'run.json')).runId
    assert.is(readRun(f.ctx, T1)?.runId, before)
    assert.equal(
      lintDataDir(f.ctx)
        .filter((p) => p.code === 'legacy_run_dir')
        .map((p) => p.where.file),
      [join(f.dir, 'runs', T1), join(f.dir, 'runs', T2)],
    )
    f.advance(1_000)
    await heartbeat(f.ctx, T1, 'swe-backend')
    assert.not.ok(existsSync(join(f.dir, 'runs', T1)))
    assert.is(readJson(join(runDir(f, T1), 'run_heartbeat.json')).beatCount, 1)
    initDataDir(f.ctx)
    assert.not.ok(existsSync(join(f.dir, 'runs', T2)))
    assert.is(readRun(f.ctx, T2)?.agentId, 'swe-backend')
    assert.equal(lintDataDir(f.ctx), [])
  }),
)

test(
  'poll counts every task listed in tasksEvaluated, as the reference does, not the in-progress ones left after recovery',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    await makeTask(f.ctx, { id: T3, status: 'done' })
    f.advance(301_000)
    const r = await poll(f.ctx)
    assert.is(r.actions.length, 1)
    assert.is(r.tasksEvaluated, 3)
  }),
)

test(
  'session end sets aside an earlier result found beside a run the reference started later (the reference leases without clearing it)',
  withFixture(async (f) => {
    await referenceLeased(f, T1)
    f.advance(1_000)
    await routeMessage(f.ctx, completion(T1, { outcome: 'blocked', blockers: ['x'] }, { sentAt: f.ctx.now().toISOString() }))
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    f.advance(60_000)
    // The reference leases again: new run.json (no runId), and tea's result of the first run is still there.
    await transitionTask(f.ctx, T1, 'in-progress', { actor: 'swe-backend' })
    const now = f.ctx.now().toISOString()
    writeFileSync(
      join(runDir(f, T1), 'run.json'),
      JSON.stringify({ taskId: T1, agentId: 'swe-backend', startedAt: now, status: 'running', artifactPaths: {}, metadata: {} }),
    )
    assert.equal(await handleSessionEnd(f.ctx), [])
    assert.not.ok(existsSync(join(runDir(f, T1), 'run_result.json')), 'nothing left for the reference to apply')
    assert.is(readJson(join(runDir(f, T1), 'previous_run_result.json')).outcome, 'blocked')
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
  }),
)

test(
  'poll sets aside an earlier result beside a live reference run too, and reports it',
  withFixture(async (f) => {
    await referenceLeased(f, T1)
    f.advance(1_000)
    await routeMessage(f.ctx, completion(T1, { outcome: 'blocked', blockers: ['x'] }, { sentAt: f.ctx.now().toISOString() }))
    await transitionTask(f.ctx, T1, 'ready', { actor: 'ops' })
    f.advance(60_000)
    await transitionTask(f.ctx, T1, 'in-progress', { actor: 'swe-backend' })
    const now = f.ctx.now().toISOString()
    writeFileSync(
      join(runDir(f, T1), 'run.json'),
      JSON.stringify({ taskId: T1, agentId: 'swe-backend', startedAt: now, status: 'running' }),
    )
    assert.is((await poll(f.ctx, { dryRun: true })).resultsSetAside, undefined)
    assert.ok(existsSync(join(runDir(f, T1), 'run_result.json')), 'a dry run moves nothing')
    const r = await poll(f.ctx)
    assert.equal(r.resultsSetAside, [T1])
    assert.not.ok(existsSync(join(runDir(f, T1), 'run_result.json')))
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
  }),
)

test.run()
