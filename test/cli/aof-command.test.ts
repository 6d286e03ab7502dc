/**
 * `tea aof …` in-process: every subcommand through `main(['aof', …argv], io)` with an in-memory Io, checking
 * stdout, stderr, exit codes and the data dir. (test/e2e/aof-cli.test.ts runs the same commands against the built
 * bundle.)
 */

import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryIo } from '../../src/cli/io.ts'
import { main } from '../../src/cli/main.ts'
import { tempDir } from '../support/temp-dir.ts'

interface Run {
  code: number
  out: string
  err: string
}

function harness() {
  const dir = tempDir('tea-aof-cli-')
  const run = async (argv: string[], stdin = '', env: Record<string, string> = {}): Promise<Run> => {
    const io = memoryIo({ cwd: dir, env: { ...env }, stdin })
    const code = await main(['aof', ...argv], io)
    return { code, out: io.stdout, err: io.stderr }
  }
  const d = (...argv: string[]) => [...argv, '--data-dir', join(dir, 'data')]
  return { dir, run, d, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

function envelope(type: string, taskId: string, payload: Record<string, unknown>, fromAgent = 'swe') {
  return {
    protocol: 'aof',
    version: 1,
    type,
    taskId,
    fromAgent,
    toAgent: 'orch',
    sentAt: new Date(Date.now() + 1000).toISOString(),
    payload,
  }
}

test('init, create, lease, send (status + completion), show, events, lint: the whole flow', async () => {
  const h = harness()
  try {
    assert.is((await h.run(h.d('init'))).code, 0)
    for (const s of ['backlog', 'ready', 'in-progress', 'blocked', 'review', 'done', 'cancelled', 'deadletter']) {
      assert.ok(existsSync(join(h.dir, 'data', 'tasks', s)), s)
    }
    const created = await h.run(
      h.d(
        'task',
        'create',
        '--title',
        'Build it',
        '--agent',
        'swe',
        '--status',
        'ready',
        '--meta',
        'reviewRequired=false',
        '--meta',
        'owner=ops',
      ),
    )
    assert.is(created.code, 0)
    const id = created.out.trim()
    assert.match(id, /^TASK-\d{4}-\d{2}-\d{2}-[A-Za-z0-9]{8}$/)

    const lease = await h.run(h.d('lease', id, '--agent', 'swe', '--ttl-ms', '60000'))
    assert.is(lease.code, 0)
    const leased = JSON.parse(lease.out)
    assert.equal([leased.status, leased.lease.agent, leased.renewed], ['in-progress', 'swe', false])

    const hb = await h.run(h.d('heartbeat', id, '--agent', 'swe'))
    assert.is(JSON.parse(hb.out).beatCount, 1)

    const status = await h.run(
      h.d('send'),
      `AOF/1 ${JSON.stringify(envelope('status.update', id, { taskId: id, agentId: 'swe', progress: 'half' }))}`,
    )
    assert.equal([status.code, JSON.parse(status.out).outcome], [0, 'accepted'])

    const file = join(h.dir, 'report.json')
    writeFileSync(
      file,
      JSON.stringify(
        envelope('completion.report', id, {
          outcome: 'done',
          summaryRef: 'outputs/s.md',
          tests: { total: 1, passed: 1, failed: 0 },
          notes: 'ok',
        }),
      ),
    )
    const done = await h.run(h.d('send', file))
    const outcome = JSON.parse(done.out)
    assert.equal([done.code, outcome.outcome, outcome.transitions.length], [0, 'accepted', 2])

    const show = await h.run(h.d('task', 'show', id, '--json'))
    const task = JSON.parse(show.out)
    assert.equal([task.status, task.frontmatter.metadata], ['done', { reviewRequired: false, owner: 'ops' }])
    assert.match(task.body, '## Work Log\n- ')

    const listed = await h.run(h.d('task', 'list', '--status', 'done', '--json'))
    assert.equal(
      JSON.parse(listed.out).map((t: { id: string }) => t.id),
      [id],
    )

    const events = await h.run(h.d('events', '--task', id, '--type', 'task.transitioned'))
    const lines = events.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    assert.equal(
      lines.map((e) => `${e.payload.from}->${e.payload.to}`),
      ['ready->in-progress', 'in-progress->review', 'review->done'],
    )
    assert.is(new Set(lines.map((e) => e.eventId)).size, 3)

    const lint = await h.run(h.d('lint'))
    assert.equal([lint.code, lint.out], [0, 'OK: no problems\n'])
  } finally {
    h.cleanup()
  }
})

test('send prints rejected and ignored outcomes and still exits 0', async () => {
  const h = harness()
  try {
    await h.run(h.d('init'))
    const bad = await h.run(h.d('send', '-'), 'AOF/1 {"protocol":"aof"')
    assert.equal([bad.code, JSON.parse(bad.out)], [0, { outcome: 'rejected', reason: 'invalid_json' }])
    const chat = await h.run(h.d('send'), 'hello there')
    assert.equal([chat.code, JSON.parse(chat.out)], [0, { outcome: 'ignored' }])
    const missing = await h.run(
      h.d('send'),
      JSON.stringify(envelope('status.update', 'TASK-2026-02-09-999', { taskId: 'TASK-2026-02-09-999', agentId: 'swe', notes: 'x' })),
    )
    assert.equal(JSON.parse(missing.out), {
      outcome: 'rejected',
      reason: 'task_not_found',
      taskId: 'TASK-2026-02-09-999',
      type: 'status.update',
    })
    const traversal = await h.run(h.d('send'), JSON.stringify(envelope('status.update', 'TASK-../../etc', { notes: 'x' })))
    assert.is(JSON.parse(traversal.out).reason, 'invalid_envelope')
  } finally {
    h.cleanup()
  }
})

test('task move refuses a transition the table does not allow (exit 1) and performs an allowed one', async () => {
  const h = harness()
  try {
    const id = (await h.run(h.d('task', 'create', '--title', 'x', '--status', 'ready'))).out.trim()
    const refused = await h.run(h.d('task', 'move', id, 'done'))
    assert.is(refused.code, 1)
    assert.match(refused.err, 'cannot move from ready to done')
    const moved = await h.run(h.d('task', 'move', id, 'blocked', '--reason', 'waiting'))
    assert.equal([moved.code, moved.out], [0, `${id}: ready -> blocked\n`])
    const ev = await h.run(h.d('events', '--type', 'task.transitioned'))
    assert.is(JSON.parse(ev.out).payload.reason, 'waiting')
  } finally {
    h.cleanup()
  }
})

test('poll --dry-run --now plans a reclaim without doing it; poll --now does it', async () => {
  const h = harness()
  try {
    const id = (await h.run(h.d('task', 'create', '--title', 'x', '--status', 'ready', '--agent', 'swe'))).out.trim()
    await h.run(h.d('lease', id, '--agent', 'swe', '--heartbeat-ttl-ms', '1000'))
    const later = new Date(Date.now() + 60_000).toISOString()
    const dry = JSON.parse((await h.run(h.d('poll', '--dry-run', '--now', later))).out)
    assert.equal([dry.dryRun, dry.actions.length, dry.actions[0].type], [true, 1, 'stale_heartbeat'])
    assert.is(JSON.parse((await h.run(h.d('task', 'show', id, '--json'))).out).status, 'in-progress')
    const wet = JSON.parse((await h.run(h.d('poll', '--now', later))).out)
    assert.is(wet.actions[0].resolution, 'reclaimed')
    assert.is(JSON.parse((await h.run(h.d('task', 'show', id, '--json'))).out).status, 'ready')
  } finally {
    h.cleanup()
  }
})

test('session-end applies a result of the current run', async () => {
  const h = harness()
  try {
    const id = (await h.run(h.d('task', 'create', '--title', 'x', '--status', 'ready', '--agent', 'swe'))).out.trim()
    const runId = JSON.parse((await h.run(h.d('lease', id, '--agent', 'swe'))).out).runId
    writeFileSync(
      join(h.dir, 'data', 'state', 'runs', id, 'run_result.json'),
      JSON.stringify({ taskId: id, agentId: 'swe', runId, completedAt: new Date(Date.now() + 1000).toISOString(), outcome: 'partial' }),
    )
    const r = await h.run(h.d('session-end'))
    assert.equal(JSON.parse(r.out), [{ taskId: id, outcome: 'partial', transitions: [{ from: 'in-progress', to: 'review' }] }])
  } finally {
    h.cleanup()
  }
})

test('lint exits 1 and names the broken file; list warns about it and lists the rest', async () => {
  const h = harness()
  try {
    const id = (await h.run(h.d('task', 'create', '--title', 'good'))).out.trim()
    const broken = join(h.dir, 'data', 'tasks', 'backlog', 'TASK-2026-02-09-001.md')
    writeFileSync(broken, '---\nnot: [closed\n---\n')
    const lint = await h.run(h.d('lint'))
    assert.is(lint.code, 1)
    // file:line:col (the YAML error's place in the file), lint's code, the message
    assert.match(lint.out, `${broken}:2:`)
    assert.match(lint.out, /:2:\d+: unreadable_task the frontmatter is not valid YAML/)
    const list = await h.run(h.d('task', 'list', '--json'))
    assert.equal(
      JSON.parse(list.out).map((t: { id: string }) => t.id),
      [id],
    )
    assert.match(list.err, broken)
  } finally {
    h.cleanup()
  }
})

test('task create --parent links a child to an existing parent and refuses a missing one', async () => {
  const h = harness()
  try {
    const parent = (await h.run(h.d('task', 'create', '--title', 'parent'))).out.trim()
    const child = await h.run(h.d('task', 'create', '--title', 'child', '--parent', parent, '--body', '## Instructions\nhelp'))
    assert.is(child.code, 0)
    const shown = JSON.parse((await h.run(h.d('task', 'show', child.out.trim(), '--json'))).out)
    assert.equal([shown.frontmatter.parentId, shown.body], [parent, '## Instructions\nhelp'])
    const orphan = await h.run(h.d('task', 'create', '--title', 'x', '--parent', 'TASK-2026-02-09-999'))
    assert.is(orphan.code, 1)
    assert.match(orphan.err, 'parent task TASK-2026-02-09-999 not found')
  } finally {
    h.cleanup()
  }
})

test('usage errors exit 2; every subcommand has --help; TEA_DATA_DIR is the default data dir', async () => {
  const h = harness()
  try {
    assert.is((await h.run([])).code, 2)
    assert.is((await h.run(['bogus'])).code, 2)
    assert.is((await h.run(h.d('task', 'create'))).code, 2)
    assert.is((await h.run(h.d('task', 'show', 'TASK-../../etc'))).code, 2)
    assert.is((await h.run(h.d('task', 'move', 'TASK-2026-02-09-001', 'sideways'))).code, 2)
    assert.is((await h.run(h.d('poll', '--now', 'yesterday'))).code, 2)
    assert.is((await h.run(h.d('lease', 'TASK-2026-02-09-001'))).code, 2)
    assert.is((await h.run(h.d('lint', '--frobnicate'))).code, 2)
    for (const argv of [
      ['--help'],
      ['init', '--help'],
      ['task', '--help'],
      ['task', 'create', '--help'],
      ['task', 'list', '--help'],
      ['task', 'show', '--help'],
      ['task', 'move', '--help'],
      ['lease', '--help'],
      ['heartbeat', '--help'],
      ['send', '--help'],
      ['session-end', '--help'],
      ['poll', '--help'],
      ['events', '--help'],
      ['lint', '--help'],
    ]) {
      const r = await h.run(argv)
      assert.is(r.code, 0, argv.join(' '))
      assert.match(r.out, 'Usage: tea aof', argv.join(' '))
    }
    await h.run(['init'], '', { TEA_DATA_DIR: join(h.dir, 'envdir') })
    assert.ok(existsSync(join(h.dir, 'envdir', 'tasks', 'ready')))
    await h.run(['init'])
    assert.ok(existsSync(join(h.dir, '.tea', 'tasks', 'ready')))
  } finally {
    h.cleanup()
  }
})

test('--meta refuses __proto__, constructor and prototype as keys (exit 2, no task), and keeps every other key', async () => {
  const h = harness()
  try {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const r = await h.run(h.d('task', 'create', '--title', 'x', '--meta', `${key}={"polluted":true}`))
      assert.is(r.code, 2, key)
      assert.match(r.err, `tea aof task create: --meta key "${key}" is reserved`)
    }
    assert.equal(JSON.parse((await h.run(h.d('task', 'list', '--json'))).out), [])
    const id = (
      await h.run(
        h.d('task', 'create', '--title', 'x', '--meta', 'toString=1', '--meta', 'hasOwnProperty=no', '--meta', 'a={"__proto__":1}'),
      )
    ).out.trim()
    const shown = JSON.parse((await h.run(h.d('task', 'show', id, '--json'))).out)
    assert.equal(shown.frontmatter.metadata, { toString: 1, hasOwnProperty: 'no', a: JSON.parse('{"__proto__":1}') })
  } finally {
    h.cleanup()
  }
})

test('TTL flags are checked at the flag: 1e99, -5, abc and 0 exit 2 naming the flag and its range; the task is untouched', async () => {
  const h = harness()
  try {
    const id = (await h.run(h.d('task', 'create', '--title', 'x', '--status', 'ready'))).out.trim()
    for (const [flag, value] of [
      ['--ttl-ms', '1e99'],
      ['--heartbeat-ttl-ms', '1e99'],
      ['--ttl-ms', '-5'],
      ['--ttl-ms', 'abc'],
      ['--ttl-ms', '0'],
    ] as const) {
      const r = await h.run(h.d('lease', id, '--agent', 'swe', flag, value))
      assert.is(r.code, 2, `${flag} ${value}`)
      assert.is(
        r.err,
        `tea aof lease: ${flag} expects a whole number of milliseconds from 1 to 2592000000 (30d), got ${JSON.stringify(value)}\nhint: 'tea aof lease --help' shows its usage\n`,
      )
    }
    assert.is(JSON.parse((await h.run(h.d('task', 'show', id, '--json'))).out).status, 'ready')
    assert.is((await h.run(h.d('poll', '--heartbeat-ttl-ms', '1e99'))).code, 2)
    assert.is((await h.run(h.d('heartbeat', id, '--agent', 'swe', '--ttl-ms', '1e99'))).code, 2)
  } finally {
    h.cleanup()
  }
})

test('task show of a missing task is AOF_NOT_FOUND (exit 1); a task id that is not one is a usage error (exit 2)', async () => {
  const h = harness()
  try {
    await h.run(h.d('init'))
    const missing = await h.run(h.d('task', 'show', 'TASK-2026-02-09-999'))
    assert.is(missing.code, 1)
    assert.match(missing.err, 'tea aof task show: AOF_NOT_FOUND: task TASK-2026-02-09-999 not found')
    const bad = await h.run(h.d('events', '--task', '../x'))
    assert.is(bad.code, 2)
    assert.match(bad.err, 'expected --task to be a task id like')
  } finally {
    h.cleanup()
  }
})

test.run()
