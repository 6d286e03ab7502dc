// Child process of claim-run.test.ts: opens the store, says `ready`, waits for the parent's `go` on stdin (sent once
// every racer is ready, so a slow start on a loaded machine cannot spread them out), then tries to take run `r` the
// way the run lifecycle does (refuse a live owner that is not us), prints `won` or `lost`, and stays alive a little
// so that the others see a live owner.
import { processAlive } from '../../src/core/process.ts'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'

const [dir, mode] = process.argv.slice(2) as [string, 'claim' | 'read-then-write']
const store = openLmdbStore(dir)
await store.getRun('r')
process.stdout.write('ready\n')
await new Promise((r) => process.stdin.once('data', r))
process.stdin.destroy()
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
    // The old way: check, then write: not atomic. The pause stands for the work between the two and makes the
    // window wider than the spread of the racers' starts.
    const current = await store.getRun('r')
    if (current && !takenBy(current)) {
      await new Promise((r) => setTimeout(r, 100))
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
