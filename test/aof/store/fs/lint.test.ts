import { mkdirSync, writeFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createTask, getTask, lintDataDir, routeMessage } from '../../../../src/aof/index.ts'
import { formatIssue } from '../../../../src/core/issues.ts'
import { T1, T2, fixture, makeTask, statusUpdate } from '../../helpers.ts'

test('a clean data dir lints clean', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    await createTask(f.ctx, { title: 'x' })
    assert.equal(lintDataDir(f.ctx), [])
  } finally {
    f.cleanup()
  }
})

test('lint reports every problem with its path; other tasks keep working', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    await makeTask(f.ctx, { id: T2, status: 'ready' })
    const tasks = join(f.dir, 'tasks')
    const broken = join(tasks, 'ready', 'TASK-2026-02-09-005.md')
    writeFileSync(broken, '---\ntitle: [unclosed\n---\n')
    const mismatch = join(tasks, 'backlog', 'TASK-2026-02-09-006.md')
    mkdirSync(join(tasks, 'backlog'), { recursive: true })
    writeFileSync(mismatch, readFileSync(join(tasks, 'ready', `${T2}.md`), 'utf8').replace(`id: ${T2}`, 'id: TASK-2026-02-09-006'))
    const dup = join(tasks, 'blocked', `${T1}.md`)
    mkdirSync(join(tasks, 'blocked'), { recursive: true })
    writeFileSync(dup, readFileSync(join(tasks, 'in-progress', `${T1}.md`), 'utf8'))
    mkdirSync(join(tasks, 'weird'))
    writeFileSync(join(tasks, 'ready', 'notes.md'), 'hi')
    const offset = join(tasks, 'ready', 'TASK-2026-02-09-007.md')
    writeFileSync(
      offset,
      readFileSync(join(tasks, 'ready', `${T2}.md`), 'utf8')
        .replace(`id: ${T2}`, 'id: TASK-2026-02-09-007')
        .replace(/createdAt: (\S+)Z/, 'createdAt: 2026-02-10T11:00:00.000+01:00'),
    )

    const problems = lintDataDir(f.ctx)
    const byCode = (code: string) =>
      problems
        .filter((p) => p.code === code)
        .map((p) => p.where.file)
        .sort()
    assert.equal(byCode('unreadable_task'), [broken])
    assert.equal(byCode('status_mismatch'), [dup, mismatch].sort())
    assert.equal(byCode('duplicate_task'), [dup, join(tasks, 'in-progress', `${T1}.md`)].sort())
    assert.equal(byCode('lease_not_in_progress'), [dup])
    assert.equal(byCode('unknown_status_dir'), [join(tasks, 'weird')])
    assert.equal(byCode('invalid_task_id'), [join(tasks, 'ready', 'notes.md')])
    assert.equal(byCode('timestamp_offset'), [offset])
    const unreadable = problems.find((p) => p.code === 'unreadable_task')!
    assert.match(unreadable.message, /^the frontmatter is not valid YAML/)
    assert.is(unreadable.where.line, 2, 'the line of the YAML error, counted in the file')
    assert.match(formatIssue(unreadable), `${broken}:2:`)

    // The other tasks are unaffected.
    assert.is((await getTask(f.ctx, T2))!.status, 'ready')
    assert.is((await routeMessage(f.ctx, statusUpdate(T2, { notes: 'fine' }))).outcome, 'accepted')
  } finally {
    f.cleanup()
  }
})

test.run()
