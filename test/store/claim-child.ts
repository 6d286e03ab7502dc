// Child process of claim-run.test.ts: opens the store, says `ready`, waits for the parent's `go` on stdin (sent once
// every racer is ready, so a slow start on a loaded machine cannot spread them out), then tries to take run `r` the
// way the run lifecycle does (refuse a live owner that is not us), prints `won` or `lost`, and stays alive until the
// parent's `end` (sent once every racer has answered), so that the others see a live owner however slow they are.
import { createInterface } from 'node:readline'
import { processAlive } from '../../src/core/process.ts'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'

const [dir, mode] = process.argv.slice(2) as [string, 'claim' | 'read-then-write']
const store = openLmdbStore(dir)
await store.getRun('r')
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
/** The parent's next line (undefined once it closed stdin). */
const heard = async (): Promise<string | undefined> => (await lines.next()).value
process.stdout.write('ready\n')
await heard() // go
const takenBy = (run: { status: string; pid?: number }) =>
  run.status === 'running' && run.pid !== undefined && run.pid !== process.pid && processAlive(run.pid)
let won = false
try {
  if (mode === 'claim') {
    await store.claimRun('r', (current) => {
      if (!current || takenBy(current)) throw new Error('taken')
      return { ...current, status: 'running', pid: process.pid }
    })
    won = true
  } else {
    // The old way: check, then write: not atomic. Every racer checks before any writes (the parent says `write`
    // once all have read): the window between the two, which real work would open, for certain.
    const current = await store.getRun('r')
    process.stdout.write('read\n')
    await heard() // write
    if (current && !takenBy(current)) {
      await store.updateRun('r', { status: 'running', pid: process.pid })
      won = true
    }
  }
} catch {
  won = false
}
process.stdout.write(won ? 'won\n' : 'lost\n')
await heard() // end
await store.close()
