// Child process of claim-run.test.ts: waits for a shared start instant, then tries to take run `r` the way the run
// lifecycle does (refuse a live owner that is not us), prints `won` or `lost`, and stays alive a little so that the
// others see a live owner.
import { processAlive } from '../../src/core/process.ts'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'

const [dir, startAt, mode] = process.argv.slice(2) as [string, string, 'claim' | 'read-then-write']
const store = openLmdbStore(dir)
while (Date.now() < Number(startAt)) await new Promise((r) => setImmediate(r))
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
    // The old way: check, then write: not atomic.
    const current = await store.getRun('r')
    if (current && !takenBy(current)) {
      await new Promise((r) => setTimeout(r, 5))
      await store.updateRun('r', { status: 'running', pid: process.pid })
      won = true
    }
  }
} catch {
  won = false
}
process.stdout.write(won ? 'won' : 'lost')
await new Promise((r) => setTimeout(r, 400))
await store.close()
