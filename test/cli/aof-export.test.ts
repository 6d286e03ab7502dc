/**
 * `tea aof import` and `tea aof export` against a real nats-server: a folder project (tasks in several statuses, a
 * lease and its run, a routed completion report, a handoff with its input files, a binary output, the event log)
 * goes onto NATS and comes back into another folder unchanged, file for file; running either again writes nothing;
 * a task that is newer at the target is kept.
 */

import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryIo } from '../../src/cli/io.ts'
import { main } from '../../src/cli/main.ts'
import { natsServerForFile, natsServerMissing } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'

const missing = natsServerMissing()
const dir = tempDir('tea-aof-export-')
const A = join(dir, 'a')
const B = join(dir, 'b')

async function tea(argv: string[], stdin?: string, project = `exp${process.pid}`) {
  const io = memoryIo({ cwd: dir, env: { TEA_NATS_PROJECT: project }, ...(stdin ? { stdin } : {}) })
  const code = await main(argv, io)
  return { code, out: io.stdout, err: io.stderr }
}

/** Every file under `root` (the lock folder aside: locks are per machine), path → content. */
function tree(root: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name)
      if (lstatSync(full).isDirectory()) {
        if (name !== 'locks') walk(full)
      } else out.set(relative(root, full), readFileSync(full).toString('base64'))
    }
  }
  walk(root)
  return out
}

/** The event log as a set of lines (one file per day; the order inside a day may differ between writers). */
function events(root: string): string[] {
  const d = join(root, 'events')
  return readdirSync(d)
    .flatMap((f) =>
      readFileSync(join(d, f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => `${f} ${l}`),
    )
    .sort()
}

const natsFile = natsServerForFile(test, missing, dir)

skipIf(test, missing, 'a folder project goes onto NATS and back into another folder unchanged; again, nothing is written', async () => {
  const fs = ['--data-dir', A]
  const create = async (title: string, status: string, agent = 'swe-backend') =>
    (
      await tea(['aof', 'task', 'create', '--title', title, '--status', status, '--agent', agent, '--body', `About ${title}.`, ...fs])
    ).out.trim()
  const parent = await create('Parent', 'ready')
  const child = await create('Child', 'ready')
  const done = await create('Finished', 'ready')
  const idle = await create('Later', 'backlog')
  assert.is((await tea(['aof', 'lease', parent, '--agent', 'swe-backend', ...fs])).code, 0)
  assert.is((await tea(['aof', 'lease', done, '--agent', 'swe-backend', ...fs])).code, 0)
  const sentAt = new Date(Date.now() + 1_000).toISOString()
  const head = { protocol: 'aof', version: 1, fromAgent: 'swe-backend', toAgent: 'orchestrator', sentAt }
  const handoff = {
    ...head,
    type: 'handoff.request',
    taskId: child,
    payload: { taskId: child, parentTaskId: parent, fromAgent: 'swe-backend', toAgent: 'swe-qa', dueBy: '2026-12-01T00:00:00.000Z' },
  }
  assert.is(JSON.parse((await tea(['aof', 'send', '-', ...fs], JSON.stringify(handoff))).out).outcome, 'accepted')
  const report = {
    ...head,
    type: 'completion.report',
    taskId: done,
    payload: { outcome: 'done', summaryRef: '', notes: 'ok', tests: { total: 1, passed: 1, failed: 0 } },
  }
  assert.is(JSON.parse((await tea(['aof', 'send', '-', ...fs], JSON.stringify(report))).out).outcome, 'accepted')
  const outputs = join(A, 'tasks', 'review', done, 'outputs')
  mkdirSync(outputs, { recursive: true })
  writeFileSync(join(outputs, 'capture.bin'), Buffer.from(Array.from({ length: 5_000 }, (_, i) => i % 256)))

  const nats = ['--nats', natsFile.server.url]
  const imported = await tea(['aof', 'import', ...nats, ...fs])
  assert.is(imported.code, 0, imported.err)
  const up = JSON.parse(imported.out)
  assert.equal([up.tasks, up.runFiles, up.files], [{ created: 4, replaced: 0, same: 0, kept: 0 }, 5, 3])
  assert.ok(up.events > 10, String(up.events))
  assert.equal(up.notCopied, [])

  const exported = await tea(['aof', 'export', ...nats, '--data-dir', B])
  assert.is(exported.code, 0, exported.err)
  const down = JSON.parse(exported.out)
  assert.equal([down.tasks.created, down.runFiles, down.files, down.events], [4, 5, 3, up.events])

  const [a, b] = [tree(A), tree(B)]
  const files = (t: Map<string, string>) => [...t.keys()].filter((k) => !k.startsWith('events/'))
  assert.equal(files(b), files(a))
  for (const k of files(a)) assert.is(b.get(k), a.get(k), k)
  assert.equal(events(B), events(A))
  for (const id of [parent, child, done, idle])
    assert.ok(
      files(a).some((k) => k.includes(id)),
      id,
    )

  // Both directions again: everything is already there.
  const again = JSON.parse((await tea(['aof', 'import', ...nats, ...fs])).out)
  assert.equal([again.tasks, again.runFiles, again.files, again.events], [{ created: 0, replaced: 0, same: 4, kept: 0 }, 0, 0, 0])
  const back = JSON.parse((await tea(['aof', 'export', ...nats, '--data-dir', B])).out)
  assert.equal([back.tasks.same, back.runFiles, back.files, back.events], [4, 0, 0, 0])

  // A task moved on in B since is newer than NATS's copy: an export keeps it and says so.
  assert.is((await tea(['aof', 'task', 'move', idle, 'ready', '--data-dir', B])).code, 0)
  const kept = await tea(['aof', 'export', ...nats, '--data-dir', B])
  assert.equal(JSON.parse(kept.out).keptNewer, [idle])
  assert.match(kept.err, `note: ${idle} is newer on ${B}; kept it`)
  assert.match((await tea(['aof', 'task', 'show', idle, '--data-dir', B])).out, 'status: ready')
})

skipIf(test, missing, 'an unreadable task file is not copied: named on stderr, exit 1, the other tasks copied', async () => {
  const C = join(dir, 'c')
  const project = `bad${process.pid}`
  const good = (await tea(['aof', 'task', 'create', '--title', 'Good', '--status', 'ready', '--data-dir', C])).out.trim()
  const bad = join(C, 'tasks', 'ready', 'TASK-2026-02-09-001.md')
  writeFileSync(bad, '---\nid: [unclosed\n---\n')
  const up = await tea(['aof', 'import', '--nats', natsFile.server.url, '--data-dir', C], undefined, project)
  assert.is(up.code, 1)
  assert.match(up.err, `warning: not copied: ${bad}`)
  const report = JSON.parse(up.out)
  assert.equal([report.tasks.created, report.notCopied.length], [1, 1])
  // The other way, a target whose copy of the task cannot be read refuses that task alone.
  const D = join(dir, 'd')
  mkdirSync(join(D, 'tasks', 'ready'), { recursive: true })
  writeFileSync(join(D, 'tasks', 'ready', `${good}.md`), 'not a task file')
  const down = await tea(['aof', 'export', '--nats', natsFile.server.url, '--data-dir', D], undefined, project)
  assert.is(down.code, 1)
  assert.match(down.err, `warning: not copied: ${join(D, 'tasks', 'ready', `${good}.md`)}`)
})

test('export and import without a NATS server are refused in one line', async () => {
  const r = await tea(['aof', 'export', '--data-dir', B])
  assert.is(r.code, 2)
  assert.match(r.err, 'tea aof export needs a NATS server: give --nats URL (or set TEA_NATS_URL)')
})

test.run()
