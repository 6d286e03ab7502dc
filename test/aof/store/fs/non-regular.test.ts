/**
 * Issue 9, probe defect D6 and its notes: no AOF operation opens anything but a regular file. A FIFO in a status
 * folder (or as a run artifact, an event log, a lock, a handoff file) is reported at its path and never opened —
 * opened without O_NONBLOCK it blocked the whole process in open() — and a symlink is never followed, so no error
 * or listing can quote what it points to.
 *
 * The FIFO cases run each operation in a child process with a time limit (fixtures/aof-op.ts): a regression then
 * fails the test (the child is killed) instead of hanging the suite.
 */

import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { getTask, lintDataDir, listTasks, transitionTask } from '../../../../src/aof/index.ts'
import { workerTaskState } from '../../../../src/aof/roles/worker-task-state.ts'
import { readHandoffInputs } from '../../../../src/aof/store/fs/handoff-inputs.ts'
import { isTeaError } from '../../../../src/core/errors.ts'
import { skipIf } from '../../../support/skip.ts'
import { T1, T2, T3, type Fixture, makeTask, withFixture } from '../../helpers.ts'
import { tempDir } from '../../../support/temp-dir.ts'

const SCRIPT = join(import.meta.dirname, 'fixtures', 'aof-op.ts')
const NOW = '2026-02-10T10:00:00.000Z'
const CANARY = 'root:x:0:0:SECRET-CANARY:/root:/bin/bash'

const noMkfifo = spawnSync('mkfifo', ['--version']).error ? 'mkfifo is not installed' : false

interface OpResult {
  ok?: unknown
  error?: { code?: string; message?: string; where?: { file?: string } }
}

/** Runs one operation in a child; one that blocks is killed after 20 s and fails the test. */
function op(f: Fixture, name: string, id = ''): OpResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, name, f.dir, id], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
    env: { ...process.env, AOF_NOW: NOW },
  })
  assert.is(r.signal, null, `'${name}' blocked and was killed (${r.signal}): it opened a FIFO. stderr: ${r.stderr}`)
  assert.is(r.status, 0, `'${name}' exited ${r.status}: ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as OpResult
}

function mkfifo(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true })
  const r = spawnSync('mkfifo', [path])
  if (r.status !== 0) throw new Error(`mkfifo ${path}: ${r.stderr}`)
}

const fifoIn = (f: Fixture, status: string, id: string) => join(f.dir, 'tasks', status, `${id}.md`)
const isFifo = (path: string) => lstatSync(path).isFIFO()

skipIf(
  test,
  noMkfifo,
  'a FIFO in ready/: task list lists the other tasks and reports the FIFO at its path, unopened',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const fifo = fifoIn(f, 'ready', T2)
    mkfifo(fifo)
    const r = op(f, 'list')
    const { tasks, problems } = r.ok as { tasks: unknown[]; problems: Array<{ code?: string; message: string; where: { file: string } }> }
    assert.equal(tasks, [{ id: T1, status: 'ready' }])
    assert.is(problems.length, 1)
    assert.is(problems[0]!.where.file, fifo)
    assert.is(problems[0]!.code, 'AOF_INVALID')
    assert.match(problems[0]!.message, 'is not a regular file (a FIFO, socket or device)')
    assert.ok(isFifo(fifo), 'the FIFO is left alone')
  }),
)

skipIf(
  test,
  noMkfifo,
  'a FIFO in ready/: lint reports it as unreadable_task and goes on',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const fifo = fifoIn(f, 'ready', T2)
    mkfifo(fifo)
    const problems = op(f, 'lint').ok as Array<{ code: string; message: string; where: { file: string } }>
    assert.equal(
      problems.map((p) => [p.code, p.where.file]),
      [['unreadable_task', fifo]],
    )
    assert.match(problems[0]!.message, 'not a regular file')
  }),
)

skipIf(
  test,
  noMkfifo,
  'a FIFO task: show, move and lease refuse it with AOF_INVALID at its path and change nothing',
  withFixture(async (f) => {
    const fifo = fifoIn(f, 'ready', T2)
    mkfifo(fifo)
    for (const name of ['show', 'move', 'lease']) {
      const r = op(f, name, T2)
      assert.is(r.error?.code, 'AOF_INVALID', `${name}: ${JSON.stringify(r)}`)
      assert.is(r.error?.where?.file, fifo, name)
      assert.match(r.error!.message!, 'not a regular file')
    }
    assert.ok(isFifo(fifo))
    assert.not.ok(existsSync(fifoIn(f, 'cancelled', T2)), 'not moved')
    assert.not.ok(existsSync(join(f.dir, 'state', 'runs', T2)), 'no run started')
  }),
)

skipIf(
  test,
  noMkfifo,
  'a FIFO as run.json reads as absent, and lint names it',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1 })
    const runJson = join(f.dir, 'state', 'runs', T1, 'run.json')
    rmSync(runJson)
    mkfifo(runJson)
    assert.equal(op(f, 'run', T1), { ok: null })
    const problems = op(f, 'lint').ok as Array<{ code: string; message: string; where: { file: string } }>
    assert.equal(
      problems.map((p) => [p.code, p.where.file]),
      [['unreadable_run_artifact', runJson]],
    )
  }),
)

skipIf(
  test,
  noMkfifo,
  'a FIFO as an event log: readers skip it, a writer refuses it with AOF_INVALID, lint names it',
  withFixture(async (f) => {
    mkdirSync(join(f.dir, 'events'), { recursive: true })
    writeFileSync(
      join(f.dir, 'events', '2026-02-09.jsonl'),
      `${JSON.stringify({ eventId: 'x', type: 'earlier', timestamp: '2026-02-09T00:00:00.000Z', actor: 't', payload: {} })}\n`,
      { flag: 'w' },
    )
    const log = join(f.dir, 'events', '2026-02-10.jsonl')
    mkfifo(log)
    assert.equal(op(f, 'events'), { ok: ['earlier'] })
    const r = op(f, 'append')
    assert.is(r.error?.code, 'AOF_INVALID', JSON.stringify(r))
    assert.is(r.error?.where?.file, log)
    const problems = op(f, 'lint').ok as Array<{ code: string; where: { file: string } }>
    assert.equal(
      problems.map((p) => [p.code, p.where.file]),
      [['unreadable_event_log', log]],
    )
  }),
)

skipIf(
  test,
  noMkfifo,
  'a FIFO where a task lock should be: taking the lock times out with AOF_LOCKED, it does not hang',
  withFixture(async (f) => {
    mkfifo(join(f.dir, 'locks', `${T1}.lock`))
    const r = op(f, 'lock', T1)
    assert.is(r.error?.code, 'AOF_LOCKED', JSON.stringify(r))
  }),
)

skipIf(
  test,
  noMkfifo,
  'a FIFO as inputs/handoff.json: the worker gives the agent no inputs',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    mkfifo(join(f.dir, 'tasks', 'ready', T1, 'inputs', 'handoff.json'))
    const r = op(f, 'worker-state', T1)
    assert.equal((r.ok as { task: { inputs: unknown } }).task.inputs, {})
  }),
)

test(
  'a task file that is a symlink is refused, never followed, and what it points to is never quoted',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const outside = tempDir('tea-aof-outside-')
    try {
      const secret = join(outside, 'passwd')
      writeFileSync(secret, `${CANARY}\n`)
      const link = join(f.dir, 'tasks', 'ready', `${T2}.md`)
      symlinkSync(secret, link)
      // A link to a perfectly valid task elsewhere is not followed either.
      const valid = join(outside, `${T3}.md`)
      writeFileSync(valid, readFileSync(join(f.dir, 'tasks', 'ready', `${T1}.md`), 'utf8').replace(`id: ${T1}`, `id: ${T3}`))
      const validLink = join(f.dir, 'tasks', 'ready', `${T3}.md`)
      symlinkSync(valid, validLink)

      const { tasks, problems } = listTasks(f.ctx)
      assert.equal(
        tasks.map((t) => t.id),
        [T1],
      )
      assert.equal(problems.map((p) => p.where.file).sort(), [link, validLink])
      for (const p of problems) assert.match(p.message, 'is a symbolic link')
      assert.not.match(JSON.stringify(problems), 'SECRET-CANARY')

      for (const id of [T2, T3]) {
        const e = await getTask(f.ctx, id).then(
          () => undefined,
          (err: unknown) => err,
        )
        assert.ok(isTeaError(e, 'AOF_INVALID'), `show ${id}: ${String(e)}`)
        assert.is(e.where?.file, join(f.dir, 'tasks', 'ready', `${id}.md`))
        assert.not.match(JSON.stringify(e.toJSON()) + e.message, 'SECRET-CANARY')
        const m = await transitionTask(f.ctx, id, 'cancelled', { actor: 't' }).then(
          () => undefined,
          (err: unknown) => err,
        )
        assert.ok(isTeaError(m, 'AOF_INVALID'), `move ${id}: ${String(m)}`)
      }
      assert.ok(lstatSync(link).isSymbolicLink() && lstatSync(validLink).isSymbolicLink(), 'the links are left as they were')
      assert.is(readFileSync(secret, 'utf8'), `${CANARY}\n`)
      assert.not.ok(existsSync(join(f.dir, 'tasks', 'cancelled', `${T3}.md`)))

      const lint = lintDataDir(f.ctx)
      assert.equal(lint.map((p) => [p.code, p.where.file]).sort(), [
        ['symlink', link],
        ['symlink', validLink],
      ])
      assert.not.match(JSON.stringify(lint), 'SECRET-CANARY')
    } finally {
      rmSync(outside, { recursive: true, force: true })
    }
  }),
)

test(
  'a dangling symlink in a status folder is refused at its path, not reported as a missing task',
  withFixture(async (f) => {
    const link = join(f.dir, 'tasks', 'ready', `${T2}.md`)
    mkdirSync(join(f.dir, 'tasks', 'ready'), { recursive: true })
    symlinkSync(join(f.dir, 'nowhere.md'), link)
    const e = await getTask(f.ctx, T2).then(
      () => undefined,
      (err: unknown) => err,
    )
    assert.ok(isTeaError(e, 'AOF_INVALID'), String(e))
    assert.is(e.where?.file, link)
  }),
)

test(
  'a regular file that is not a task: the error describes its first line without quoting it',
  withFixture(async (f) => {
    const path = join(f.dir, 'tasks', 'ready', `${T2}.md`)
    mkdirSync(join(f.dir, 'tasks', 'ready'), { recursive: true })
    writeFileSync(path, `${CANARY}\nmore\n`)
    const { problems } = listTasks(f.ctx)
    assert.is(problems.length, 1)
    assert.match(
      problems[0]!.message,
      `expected the frontmatter fence '---', found a first line of ${CANARY.length} characters that is not a fence`,
    )
    assert.not.match(JSON.stringify(problems), 'SECRET-CANARY')
    // A near-fence is short and harmless, and quoting it shows the typo.
    writeFileSync(path, '----\nid: x\n---\n')
    assert.match(listTasks(f.ctx).problems[0]!.message, 'found "----"')
  }),
)

test(
  'a socket in a status folder is reported as not a regular file',
  withFixture(async (f) => {
    await makeTask(f.ctx, { id: T1, status: 'ready' })
    const path = join(f.dir, 'tasks', 'ready', `${T2}.md`)
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(path, resolve))
    try {
      const { tasks, problems } = listTasks(f.ctx)
      assert.equal(
        tasks.map((t) => t.id),
        [T1],
      )
      assert.equal(
        problems.map((p) => [p.code, p.where.file]),
        [['AOF_INVALID', path]],
      )
      assert.match(problems[0]!.message, 'not a regular file')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  }),
)

test(
  'a companion folder that is a symlink: the worker reads no handoff through it, lint names it',
  withFixture(async (f) => {
    const task = await makeTask(f.ctx, { id: T1, status: 'ready' })
    const outside = tempDir('tea-aof-outside-')
    try {
      mkdirSync(join(outside, 'inputs'))
      writeFileSync(join(outside, 'inputs', 'handoff.json'), JSON.stringify({ secret: CANARY }))
      const companion = join(f.dir, 'tasks', 'ready', T1)
      rmSync(companion, { recursive: true })
      symlinkSync(outside, companion)
      assert.equal((workerTaskState(task, 'swe-backend', readHandoffInputs(f.ctx, task)).task as { inputs: unknown }).inputs, {})
      assert.equal(
        lintDataDir(f.ctx).map((p) => [p.code, p.where.file]),
        [['symlink', companion]],
      )
    } finally {
      rmSync(outside, { recursive: true, force: true })
    }
  }),
)

test.run()
