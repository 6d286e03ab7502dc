/**
 * Handoffs on the filesystem only: where the artifacts lie and how the child's file is rewritten. Every handoff
 * scenario (AOF-BDD-62–74, 90) runs on every store in the AOF-BDD contract (bdd-handoff-cases.ts, bdd-contract.ts).
 */

import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { routeMessage } from '../../../../src/aof/index.ts'
import { T1, T2, handoff, makeTask, withFixture } from '../../helpers.ts'

test(
  'the handoff artifacts lie in the child task folder, tasks/<status>/<child>/inputs/ (AOF-BDD-62), and the child is rewritten atomically (AOF-BDD-64)',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    assert.is((await routeMessage(f.ctx, handoff(T2, T1))).outcome, 'accepted')
    const inputs = join(f.dir, 'tasks', 'ready', T2, 'inputs')
    assert.ok(existsSync(join(inputs, 'handoff.json')))
    assert.ok(existsSync(join(inputs, 'handoff.md')))
    // Written through a temp file and a rename: none is left beside the task file.
    assert.equal(
      readdirSync(join(f.dir, 'tasks', 'ready')).filter((n) => n.startsWith('.')),
      [],
    )
  }),
)

test.run()
