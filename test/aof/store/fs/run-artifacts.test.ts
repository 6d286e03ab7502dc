/**
 * Run results on the filesystem only: where the file lies, and which run a result belongs to (a pure function).
 * Writing and reading results (AOF-BDD-21–24) run on every store in the AOF-BDD contract (bdd-completion-cases.ts).
 */

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readRun, resultBelongsToRun, writeRunResult } from '../../../../src/aof/index.ts'
import { T1, fixture, makeTask } from '../../helpers.ts'

const RESULT = {
  taskId: T1,
  agentId: 'swe-backend',
  completedAt: '2026-02-10T10:01:00.000Z',
  outcome: 'partial' as const,
  deliverables: [],
  blockers: [],
}

test('writeRunResult puts the result at state/runs/<ID>/run_result.json (AOF-BDD-21 says runs/<ID>/; docs/aof.md says why)', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    writeRunResult(f.ctx, RESULT)
    const path = join(f.dir, 'state', 'runs', T1, 'run_result.json')
    assert.ok(existsSync(path))
    assert.equal(JSON.parse(readFileSync(path, 'utf8')), RESULT)
  } finally {
    f.cleanup()
  }
})

test('a result belongs to a run only when the run ids match (or, without ids, when it came after the run started)', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    const run = readRun(f.ctx, T1)!
    assert.ok(run.runId)
    assert.ok(resultBelongsToRun({ ...RESULT, runId: run.runId }, run))
    assert.not.ok(resultBelongsToRun({ ...RESULT, runId: 'earlier-run' }, run))
    const noIds = { ...run, runId: undefined }
    assert.ok(resultBelongsToRun({ ...RESULT, completedAt: '2026-02-10T10:00:01.000Z' }, noIds))
    assert.not.ok(resultBelongsToRun({ ...RESULT, completedAt: '2026-02-10T09:59:59.000Z' }, noIds))
  } finally {
    f.cleanup()
  }
})

test.run()
