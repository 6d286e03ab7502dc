/**
 * The router on the filesystem only: what a broken folder or file does to it, and that a malformed id never touches
 * the disk. The routing scenarios (AOF-BDD-28–39, 91) run on every store in the AOF-BDD contract
 * (bdd-routing-cases.ts, bdd-contract.ts).
 */

import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { getTask, routeMessage } from '../../../src/aof/index.ts'
import { T1, T2, completion, eventTypes, eventsOf, makeTask, statusUpdate, withFixture } from '../helpers.ts'

test(
  'a real write error under a handler (a file where the run folder should be: ENOTDIR) is a handler error, and the router goes on (AOF-BDD-91 on disk)',
  withFixture(async ({ ctx, dir }) => {
    await makeTask(ctx, { id: T1 })
    await makeTask(ctx, { id: T2 })
    // A file where the run folder should be: writing run_result.json fails with ENOTDIR.
    mkdirSync(join(dir, 'state', 'runs'), { recursive: true })
    writeFileSync(join(dir, 'state', 'runs', 'x'), '')
    const runDir = join(dir, 'state', 'runs', T1)
    rmSync(runDir, { recursive: true, force: true })
    writeFileSync(runDir, 'not a folder')
    const first = await routeMessage(ctx, completion(T1))
    assert.equal([first.outcome, first.reason], ['rejected', 'handler_error'])
    const [failed] = eventsOf(ctx, 'protocol.message.failed', T1)
    assert.is(failed?.type, 'completion.report')
    assert.type(failed?.error, 'string')
    const second = await routeMessage(ctx, statusUpdate(T2, { notes: 'still routing' }))
    assert.is(second.outcome, 'accepted')
    assert.match((await getTask(ctx, T2))!.body, 'still routing')
  }),
)

test(
  'a path-traversal task id never reaches the filesystem',
  withFixture(async ({ ctx, dir }) => {
    const out = await routeMessage(ctx, `AOF/1 ${JSON.stringify(completion('TASK-../../etc'))}`)
    assert.equal([out.outcome, out.reason], ['rejected', 'invalid_envelope'])
    assert.not.ok(existsSync(join(dir, 'locks')))
    assert.not.ok(existsSync(join(dir, 'state')))
  }),
)

test(
  'a task whose file is broken is reported as task_unreadable; other tasks keep working',
  withFixture(async ({ ctx, dir }) => {
    await makeTask(ctx, { id: T1 })
    await makeTask(ctx, { id: T2 })
    writeFileSync(join(dir, 'tasks', 'in-progress', `${T1}.md`), '---\ntitle: [unclosed\n---\nbody\n')
    const bad = await routeMessage(ctx, statusUpdate(T1, { notes: 'x' }))
    assert.equal([bad.outcome, bad.reason], ['rejected', 'task_unreadable'])
    const good = await routeMessage(ctx, statusUpdate(T2, { notes: 'y' }))
    assert.is(good.outcome, 'accepted')
    assert.ok(eventTypes(ctx, T1).includes('protocol.message.failed'))
  }),
)

test.run()
