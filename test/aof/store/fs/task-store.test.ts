import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  TASK_STATUSES,
  TRANSITIONS,
  createTask,
  getTask,
  isTaskId,
  isValidTransition,
  listTasks,
  readEvents,
  routeMessage,
  transitionTask,
  updateTask,
  workLogEntries,
} from '../../../../src/aof/index.ts'
import { T1, fixture, makeTask, statusUpdate, withFixture, type Fixture } from '../../helpers.ts'

type F = Fixture

const REFERENCE_FILE = `---
schemaVersion: 1
id: TASK-2026-11-22-001
title: Written by the reference
status: ready
priority: high
routing:
  agent: swe-backend
  tags:
    - interop
createdAt: "2026-11-22T01:32:44.395Z"
updatedAt: 2026-11-22T01:33:25.203Z
lastTransitionAt: 2026-11-22T01:33:25.203Z
createdBy: cli
dependsOn: []
metadata:
  custom: 1
x_edge_owner: board-7
gateHistory: []
---

## Instructions
Do it.
`

test(
  'create writes the reference layout: file, companion folders, Z timestamps, status == folder',
  withFixture(async (f) => {
    const t = await createTask(f.ctx, { title: 'Hello', agent: 'a', status: 'ready', metadata: { k: 'v' }, body: 'Body' })
    assert.ok(isTaskId(t.id))
    assert.match(t.id, /^TASK-2026-02-10-[2-9A-HJ-NP-Za-km-z]{8}$/)
    assert.ok(existsSync(join(f.dir, 'tasks', 'ready', `${t.id}.md`)))
    for (const sub of ['inputs', 'work', 'outputs']) assert.ok(existsSync(join(f.dir, 'tasks', 'ready', t.id, sub)))
    const text = readFileSync(t.path, 'utf8')
    assert.match(text, /^---\nschemaVersion: 1\nid: TASK-/)
    assert.match(text, 'status: ready\n')
    assert.match(text, 'createdAt: 2026-02-10T10:00:00.000Z\n')
    assert.match(text, 'routing:\n  agent: a\n  tags: []\n')
    assert.match(text, '---\n\nBody\n')
    assert.equal(
      readEvents(f.ctx, { type: 'task.created' }).map((e) => e.taskId),
      [t.id],
    )
  }),
)

test(
  '200 creates in parallel give 200 distinct ids, all on disk',
  withFixture(async (f) => {
    const tasks = await Promise.all(Array.from({ length: 200 }, (_, i) => createTask(f.ctx, { title: `t${i}` })))
    assert.is(new Set(tasks.map((t) => t.id)).size, 200)
    assert.is(readdirSync(join(f.dir, 'tasks', 'backlog')).filter((n) => n.endsWith('.md')).length, 200)
  }),
)

test(
  'both id shapes are read; a reference-written file keeps unknown keys and quoting-independent values on rewrite',
  withFixture(async (f) => {
    mkdirSync(join(f.dir, 'tasks', 'ready'), { recursive: true })
    const path = join(f.dir, 'tasks', 'ready', 'TASK-2026-11-22-001.md')
    writeFileSync(path, REFERENCE_FILE)
    const task = (await getTask(f.ctx, 'TASK-2026-11-22-001'))!
    assert.is(task.status, 'ready')
    assert.is(task.data.createdAt, '2026-11-22T01:32:44.395Z')
    await transitionTask(f.ctx, task.id, 'blocked', { actor: 'ops', reason: 'r' })
    const moved = readFileSync(join(f.dir, 'tasks', 'blocked', 'TASK-2026-11-22-001.md'), 'utf8')
    assert.match(moved, 'x_edge_owner: board-7')
    assert.match(moved, 'gateHistory: []')
    assert.match(moved, 'metadata:\n  custom: 1')
    assert.match(moved, 'status: blocked')
    assert.match(moved, '## Instructions\nDo it.')
    assert.not.ok(existsSync(path))
  }),
)

test(
  'the transition table is the reference table, and the store refuses what it does not allow',
  withFixture(async (f) => {
    assert.equal(TRANSITIONS.done, [])
    assert.equal(TRANSITIONS.review, ['done', 'in-progress', 'blocked', 'cancelled'])
    assert.not.ok(isValidTransition('ready', 'done'))
    assert.not.ok(isValidTransition('review', 'ready'))
    assert.ok(isValidTransition('deadletter', 'ready'))
    let allowed = 0
    for (const from of TASK_STATUSES) for (const to of TASK_STATUSES) if (isValidTransition(from, to)) allowed++
    assert.is(allowed, 3 + 4 + 5 + 3 + 4 + 1)
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    try {
      await transitionTask(f.ctx, T1, 'done', { actor: 't' })
      assert.unreachable('ready -> done must be refused')
    } catch (e) {
      assert.is((e as { code: string }).code, 'AOF_TRANSITION')
      assert.match((e as Error).message, 'cannot move from ready to done; allowed from ready: in-progress, blocked, deadletter, cancelled')
    }
  }),
)

test(
  'a transition moves the companion folder and clears the lease when leaving in-progress',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    writeFileSync(join(f.dir, 'tasks', 'in-progress', T1, 'outputs', 'x.txt'), 'x')
    const t = await transitionTask(f.ctx, T1, 'review', { actor: 't' })
    assert.is(t.data.lease, undefined)
    assert.is(readFileSync(join(f.dir, 'tasks', 'review', T1, 'outputs', 'x.txt'), 'utf8'), 'x')
    assert.not.ok(existsSync(join(f.dir, 'tasks', 'in-progress', T1)))
    assert.is(t.data.updatedAt, t.data.lastTransitionAt)
  }),
)

test(
  'crash residue (the task in two folders) is resolved to the newest copy and repaired',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const ready = join(f.dir, 'tasks', 'ready', `${T1}.md`)
    const oldCopy = readFileSync(ready, 'utf8')
    f.advance(1000)
    await transitionTask(f.ctx, T1, 'in-progress', { actor: 't' })
    // Simulate a crash between "write new file" and "delete old file": the old file is back.
    writeFileSync(ready, oldCopy)
    const task = (await getTask(f.ctx, T1))!
    assert.is(task.status, 'in-progress')
    assert.not.ok(existsSync(ready))
    assert.ok(existsSync(join(f.dir, 'tasks', 'in-progress', T1)))
    assert.equal(
      readEvents(f.ctx, { type: 'task.duplicate_resolved' }).map((e) => e.payload),
      [{ kept: 'in-progress', removed: ['ready'] }],
    )
  }),
)

test(
  'crash residue with the companion folder left behind: the folder follows the winning copy',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const oldCopy = readFileSync(join(f.dir, 'tasks', 'ready', `${T1}.md`), 'utf8')
    f.advance(1000)
    await transitionTask(f.ctx, T1, 'in-progress', { actor: 't' })
    writeFileSync(join(f.dir, 'tasks', 'ready', `${T1}.md`), oldCopy)
    cpSync(join(f.dir, 'tasks', 'in-progress', T1), join(f.dir, 'tasks', 'ready', T1), { recursive: true })
    const { rmSync } = await import('node:fs')
    rmSync(join(f.dir, 'tasks', 'in-progress', T1), { recursive: true })
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
    assert.ok(existsSync(join(f.dir, 'tasks', 'in-progress', T1, 'inputs')))
  }),
)

test(
  'listing skips a broken file and reports it with its path; the other tasks are listed',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const other = await createTask(f.ctx, { title: 'ok' })
    const broken = join(f.dir, 'tasks', 'ready', 'TASK-2026-02-09-005.md')
    writeFileSync(broken, '---\nid: [oops\n---\n')
    const { tasks, problems } = listTasks(f.ctx)
    assert.equal(tasks.map((t) => t.id).sort(), [T1, other.id].sort())
    assert.is(problems.length, 1)
    assert.is(problems[0]!.where.file, broken)
    assert.is(problems[0]!.where.line, 2, 'a YAML error keeps its line')
    assert.match(problems[0]!.message, 'not valid YAML')
  }),
)

test(
  'concurrent updates to one task never lose a Work Log entry (in-process, 40 messages)',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const msgs = Array.from({ length: 40 }, (_, i) =>
      statusUpdate(T1, { notes: `n${i}` }, { sentAt: new Date(Date.UTC(2026, 1, 10, 10, 1, i)).toISOString() }),
    )
    const outs = await Promise.all(msgs.map((m) => routeMessage(f.ctx, m)))
    assert.ok(outs.every((o) => o.outcome === 'accepted'))
    assert.is(workLogEntries((await getTask(f.ctx, T1))!.body).length, 40)
  }),
)

test(
  'updateTask rewrites in place, keeps unknown keys and moves updatedAt strictly forward',
  withFixture(async (f) => {
    const t = await createTask(f.ctx, { title: 'x', metadata: { a: 1 } })
    const u = await updateTask(f.ctx, t.id, (task) => void ((task.data as Record<string, unknown>).x_custom = 'keep'))
    const again = await updateTask(f.ctx, t.id, (task) => void ((task.data.metadata as Record<string, unknown>).b = 2))
    assert.is(again.data.x_custom, 'keep')
    assert.equal(again.data.metadata, { a: 1, b: 2 })
    assert.ok(Date.parse(String(again.data.updatedAt)) > Date.parse(String(u.data.updatedAt)))
  }),
)

test(
  'an invalid id is refused before any path is built',
  withFixture(async (f) => {
    for (const bad of ['TASK-../../etc', '../x', 'TASK-2026-02-09-001/../../x']) {
      try {
        await getTask(f.ctx, bad)
        assert.unreachable(bad)
      } catch (e) {
        assert.is((e as { code: string }).code, 'AOF_INVALID')
      }
    }
    assert.not.ok(existsSync(join(f.dir, 'locks')))
  }),
)

test.run()
