import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { _lastCommit, openLmdbStore } from '../../src/store/lmdb-store.ts'
import { run } from './harness.ts'
import { tempDir } from '../support/temp-dir.ts'

// Each commit is an fsync, which costs milliseconds on a board's SD card: a short run's start and end are counted
// here in LMDB transactions (the meta page's transaction id), on the real store.

const dir = tempDir('tea-commits-')
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

test('a 3-node run commits 2 transactions: the record with the first snapshot, then the nodes with the last snapshot and the status', async () => {
  const { commits, status } = await commitsOf('counted', THREE)
  assert.is(status, 'completed')
  // It was 5 before the record, the snapshots and the statuses shared commits (one more here when lmdb gives the
  // nodes a commit of their own: it batches what is queued while a commit runs).
  assert.ok(commits >= 2 && commits <= 2 + 1, `${commits} commits`)
})

test('an interrupt writes its snapshot and the interrupted status with the node before it (2 commits in all), and resumes from it', async () => {
  const yaml = THREE.replace('  - name: b\n', '  - name: b\n    interrupt: before\n')
  const { commits, status } = await commitsOf('paused', yaml)
  assert.is(status, 'interrupted')
  assert.ok(commits >= 2 && commits <= 2 + 1, `${commits} commits`)
  const store = openLmdbStore(dir)
  try {
    const resumed = await run(yaml, { store, runId: 'paused', resume: true })
    assert.is(resumed.status, 'completed')
    assert.equal(resumed.state, { a: 1, b: 2, c: 3 })
  } finally {
    await store.close()
  }
})

test('a run id taken meanwhile writes neither the record nor the first snapshot: RUN_EXISTS, and the run it names keeps its own', async () => {
  const store = openLmdbStore(dir)
  try {
    const first = { step: 0, node: null, state: { who: 'first' }, cursor: { next: 'a' } }
    const other = {
      id: 'taken',
      agent: 'x',
      agentPath: '/x.yaml',
      agentHash: 'h',
      status: 'running' as const,
      node: null,
      step: 0,
      createdAt: 1,
      updatedAt: 1,
    }
    await store.createRun(other, first)
    // Two creators in one turn: the second finds the id taken when its commit runs.
    const racing = await Promise.allSettled([
      store.createRun({ ...other, id: 'race' }, first),
      store.createRun({ ...other, id: 'race', agent: 'y' }, { ...first, state: { who: 'second' } }),
    ])
    assert.equal(
      racing.map((r) => r.status),
      ['fulfilled', 'rejected'],
    )
    assert.is((racing[1] as PromiseRejectedResult).reason.code, 'RUN_EXISTS')
    assert.is((await store.getRun('race'))!.agent, 'x')
    assert.equal((await store.loadLatest('race'))!.state, { who: 'first' })
    const again = await store.createRun(other, { ...first, state: { who: 'again' } }).catch((e: { code?: string }) => e)
    assert.is((again as { code?: string }).code, 'RUN_EXISTS')
    assert.equal((await store.loadLatest('taken'))!.state, { who: 'first' })
  } finally {
    await store.close()
  }
})

test.run()
