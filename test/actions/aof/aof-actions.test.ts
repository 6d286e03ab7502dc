import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { aofActions } from '../../../src/actions/aof/index.ts'
import type { Action, ActionContext } from '../../../src/actions/types.ts'
import type { RunEvent } from '../../../src/core/events.ts'
import { getTask, readRunResult, workLogEntries } from '../../../src/aof/index.ts'
import { T1, T2, fixture, makeTask } from '../../aof/helpers.ts'

function action(name: string): Action {
  const a = aofActions.find((x) => x.name === name)
  if (!a) throw new Error(`no ${name}`)
  return a
}

/** Only the members the aof.* actions use; anything else would be a bug in the action. */
function ctxFor(dataDir: string, state: Record<string, unknown> = {}): ActionContext & { events: RunEvent[] } {
  const events: RunEvent[] = []
  return { node: 'n', state, variables: {}, dataDir, emit: (e: RunEvent) => void events.push(e), events } as unknown as ActionContext & {
    events: RunEvent[]
  }
}

async function call(name: string, params: unknown, ctx: ActionContext) {
  const a = action(name)
  return a.run(v.parse(a.params, params), ctx) as Promise<{ aof: { outcome: string; reason?: string } }>
}

test('aofActions exports aof.report, aof.status and aof.handoff', () => {
  assert.equal(
    aofActions.map((a) => a.name),
    ['aof.report', 'aof.status', 'aof.handoff'],
  )
})

test('aof.status appends to the Work Log, taking task and agent from worker state', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    const ctx = ctxFor(f.dir, { task: { id: T1 }, agent_id: 'swe-backend' })
    const r = await call('aof.status', { progress: 'halfway' }, ctx)
    assert.is(r.aof.outcome, 'accepted')
    assert.match(workLogEntries((await getTask(f.ctx, T1))!.body)[0]!, 'Progress: halfway')
    assert.is(ctx.events.length, 1)
  } finally {
    f.cleanup()
  }
})

test('aof.report sends a completion report that moves the task and writes run_result.json', async () => {
  const f = fixture('2020-01-01T00:00:00.000Z')
  try {
    await makeTask(f.ctx, { id: T1 })
    const r = await call('aof.report', { taskId: T1, agent: 'swe-backend', outcome: 'needs_review', notes: 'look' }, ctxFor(f.dir))
    assert.is(r.aof.outcome, 'accepted')
    assert.is((await getTask(f.ctx, T1))!.status, 'review')
    assert.is(readRunResult(f.ctx, T1)?.notes, 'look')
  } finally {
    f.cleanup()
  }
})

test('aof.report from an agent that does not hold the task returns the rejection', async () => {
  const f = fixture('2020-01-01T00:00:00.000Z')
  try {
    await makeTask(f.ctx, { id: T1 })
    const r = await call('aof.report', { taskId: T1, agent: 'someone-else', outcome: 'done' }, ctxFor(f.dir))
    assert.equal([r.aof.outcome, r.aof.reason], ['rejected', 'unauthorized_agent'])
  } finally {
    f.cleanup()
  }
})

test('aof.handoff delegates a child task and writes its handoff inputs', async () => {
  const f = fixture('2020-01-01T00:00:00.000Z')
  try {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const r = await call(
      'aof.handoff',
      { taskId: T1, agent: 'swe-backend', childTaskId: T2, to: 'swe-qa', acceptanceCriteria: ['green'] },
      ctxFor(f.dir),
    )
    assert.is(r.aof.outcome, 'accepted')
    assert.ok(existsSync(join(f.dir, 'tasks', 'ready', T2, 'inputs', 'handoff.json')))
  } finally {
    f.cleanup()
  }
})

test('missing task id, agent or data dir are INVALID_PARAMS errors that say what to pass', async () => {
  const f = fixture()
  try {
    for (const [params, ctx, msg] of [
      [{ progress: 'x' }, ctxFor(f.dir, { agent_id: 'a' }), 'expected taskId'],
      [{ taskId: T1, progress: 'x' }, ctxFor(f.dir), 'expected agent'],
      [{ taskId: T1, agent: 'a', progress: 'x' }, ctxFor(undefined as unknown as string), 'no AOF data dir'],
    ] as const) {
      try {
        await call('aof.status', params, ctx)
        assert.unreachable(msg)
      } catch (e) {
        assert.is((e as { code: string }).code, 'INVALID_PARAMS')
        assert.match((e as Error).message, msg)
      }
    }
  } finally {
    f.cleanup()
  }
})

test.run()
