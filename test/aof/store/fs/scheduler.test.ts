/**
 * The scheduler on the filesystem only, where the test owns the clock: the exact instant a heartbeat or a lease
 * becomes stale, and the run-artifact helper. Every scheduler scenario (AOF-BDD-75–88) runs on every store in the
 * AOF-BDD contract (bdd-scheduler-cases.ts, bdd-contract.ts), where a NATS server's clock cannot be set.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { checkStaleHeartbeats, getTask, markRunArtifactExpired, poll, readRun } from '../../../../src/aof/index.ts'
import { T1, T2, makeTask, withFixture } from '../../helpers.ts'

test(
  'a heartbeat without expiresAt is stale from lastHeartbeat + TTL on, to the millisecond (at or before now)',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    mkdirSync(join(f.dir, 'state', 'runs', T1), { recursive: true })
    const hb = { taskId: T1, agentId: 'swe-backend', lastHeartbeat: '2026-02-10T10:00:00.000Z' }
    writeFileSync(join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json'), JSON.stringify(hb))
    f.setNow('2026-02-10T10:00:59.999Z')
    assert.equal(checkStaleHeartbeats(f.ctx, 60_000), [])
    f.setNow('2026-02-10T10:01:00.000Z')
    assert.equal(
      checkStaleHeartbeats(f.ctx, 60_000).map((s) => s.taskId),
      [T1],
    )
  }),
)

test(
  'a lease without a heartbeat file is reclaimed from its expiresAt on, to the millisecond',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    rmSync(join(f.dir, 'state', 'runs', T1, 'run_heartbeat.json'))
    f.setNow('2026-02-10T10:09:59.999Z')
    assert.equal((await poll(f.ctx)).actions, [])
    f.setNow('2026-02-10T10:10:00.000Z')
    assert.equal(
      (await poll(f.ctx)).actions.map((a) => [a.type, a.resolution]),
      [['expired_lease', 'reclaimed']],
    )
    assert.is((await getTask(f.ctx, T1))!.status, 'ready')
  }),
)

test(
  'markRunArtifactExpired marks the run failed with when and why (AOF-BDD-85); a task without a run has none to mark',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    f.setNow('2026-02-10T10:05:00.000Z')
    const run = markRunArtifactExpired(f.ctx, T1, 'stale_heartbeat')!
    assert.equal(
      [run.status, run.metadata.expiredAt, run.metadata.expiredReason],
      ['failed', '2026-02-10T10:05:00.000Z', 'stale_heartbeat'],
    )
    assert.equal(readRun(f.ctx, T1), run)
    assert.is(markRunArtifactExpired(f.ctx, T2, 'stale_heartbeat'), undefined)
  }),
)

test.run()
