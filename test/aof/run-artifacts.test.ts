import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readRun, readRunResult, resultBelongsToRun, writeRunResult } from '../../src/aof/index.ts'
import { isTeaError } from '../../src/core/errors.ts'
import { T1, fixture, makeTask } from './helpers.ts'

const RESULT = {
  taskId: T1,
  agentId: 'swe-backend',
  completedAt: '2026-02-10T10:01:00.000Z',
  outcome: 'partial' as const,
  deliverables: [],
  blockers: [],
}

test('AOF-BDD-21 Write run_result.json to runs directory', async () => {
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

test('AOF-BDD-22 Read existing run_result.json', () => {
  const f = fixture()
  try {
    const full = { ...RESULT, runId: 'r1', summaryRef: 'outputs/s.md', tests: { total: 2, passed: 1, failed: 1 }, notes: 'n' }
    writeRunResult(f.ctx, full)
    assert.equal(readRunResult(f.ctx, T1), full)
  } finally {
    f.cleanup()
  }
})

test('AOF-BDD-23 Read non-existent run_result.json', () => {
  const f = fixture()
  try {
    assert.is(readRunResult(f.ctx, T1), undefined)
  } finally {
    f.cleanup()
  }
})

test('AOF-BDD-24 Write run_result.json with all optional fields', () => {
  const f = fixture()
  try {
    const r = {
      ...RESULT,
      deliverables: ['src/foo.ts', 'src/bar.ts'],
      blockers: ['API key needed'],
      notes: 'Partial completion due to blocker',
    }
    writeRunResult(f.ctx, r)
    const stored = JSON.parse(readFileSync(join(f.dir, 'state', 'runs', T1, 'run_result.json'), 'utf8'))
    assert.equal(stored.deliverables, ['src/foo.ts', 'src/bar.ts'])
    assert.equal(stored.blockers, ['API key needed'])
    assert.is(stored.notes, 'Partial completion due to blocker')
  } finally {
    f.cleanup()
  }
})

test('a torn run_result.json reads as absent; an invalid one is refused on write', () => {
  const f = fixture()
  try {
    mkdirSync(join(f.dir, 'state', 'runs', T1), { recursive: true })
    writeFileSync(join(f.dir, 'state', 'runs', T1, 'run_result.json'), '{"taskId": "TASK-2026')
    assert.is(readRunResult(f.ctx, T1), undefined)
    assert.throws(
      () => writeRunResult(f.ctx, { ...RESULT, outcome: 'maybe' as never }),
      (e: unknown) => isTeaError(e, 'AOF_INVALID') && e.issues?.some((i) => i.path?.[0] === 'outcome') === true,
    )
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
