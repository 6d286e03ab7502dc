import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { _lastCommit, openLmdbStore } from '../../src/store/lmdb-store.ts'
import { run } from './harness.ts'

// Each commit is an fsync, which costs milliseconds on a board's SD card: a short run's start and end are counted
// here in LMDB transactions (the meta page's transaction id), on the real store.

const dir = mkdtempSync(join(tmpdir(), 'tea-commits-'))
test.after(() => rmSync(dir, { recursive: true, force: true }))

const THREE = `name: three
nodes:
  - name: a
    run: 'return { a: 1 }'
  - name: b
    run: 'return { b: 2 }'
  - name: c
    run: 'return { c: 3 }'
`

/** Commits of one run of `yaml`, after a first run of it (which creates the databases and msgpackr's record shapes). */
async function commitsOf(runId: string, yaml: string): Promise<{ commits: number; status: string }> {
  await run(yaml, { store: openLmdbStore(dir), runId: `${runId}-first` }).then((r) => r.store.close())
  const store = openLmdbStore(dir)
  try {
    const before = _lastCommit(dir)
    await run(yaml, { store, runId })
    await store.flush()
    return { commits: Number(_lastCommit(dir) - before), status: (await store.getRun(runId))!.status }
  } finally {
    await store.close()
  }
}

test('a 3-node run commits 4 transactions: the record, the first snapshot with its status, the nodes, the last snapshot with its status', async () => {
  const { commits, status } = await commitsOf('counted', THREE)
  assert.is(status, 'completed')
  // Before the first and last snapshots shared a commit with the run's status it was 5 (6 when lmdb gave the
  // nodes two commits: it batches what is queued while a commit runs).
  assert.ok(commits >= 3 && commits <= 4, `${commits} commits`)
})

test('an interrupt writes its snapshot and the interrupted status in one commit, and resumes from it', async () => {
  const yaml = THREE.replace('  - name: b\n', '  - name: b\n    interrupt: before\n')
  const { commits, status } = await commitsOf('paused', yaml)
  assert.is(status, 'interrupted')
  assert.ok(commits >= 3 && commits <= 4, `${commits} commits`)
  const store = openLmdbStore(dir)
  try {
    const resumed = await run(yaml, { store, runId: 'paused', resume: true })
    assert.is(resumed.status, 'completed')
    assert.equal(resumed.state, { a: 1, b: 2, c: 3 })
  } finally {
    await store.close()
  }
})

test.run()
