// Worker-thread side of the lmdb-only test "a store opened in a worker thread …": opens the same data dir,
// writes what it is told, reads what the main thread wrote, reports back and closes.
import { parentPort, workerData } from 'node:worker_threads'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'

const { dir } = workerData as { dir: string }
const store = openLmdbStore(dir)
const seen = await store.memoryGet('default', 'from-main')
await store.memoryPut('default', 'from-worker', { thread: 'worker' })
await store.putPlanHeader('r1', 'worker-plan', { by: 'worker' })
await store.putSubtask('r1', 'worker-plan', 's1', { status: 'completed' })
await store.close()
parentPort!.postMessage({ seen })
