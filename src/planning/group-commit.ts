/**
 * Group commit for subtask records. The store batches the writes queued in one event turn into one transaction
 * (one fsync), but subtasks finish one at a time, each in its own turn, so a busy plan paid a transaction per
 * subtask. Here a write waits while an earlier batch is committing, and everything that queued meanwhile goes out
 * together in one turn when it has. An idle queue writes at once, so a chain of subtasks (each waiting for the
 * previous one's record) waits no longer than before. Writes keep their order; each caller's promise settles with
 * its own write, so "counts once committed" (SPEC §3.6) still holds record by record.
 */

export type GroupCommit<A extends unknown[]> = (...args: A) => Promise<void>

export function groupCommit<A extends unknown[]>(write: (...args: A) => Promise<unknown>): GroupCommit<A> {
  type Queued = { args: A; resolve: () => void; reject: (e: unknown) => void }
  let queued: Queued[] = []
  let busy = false
  const flush = (): void => {
    const batch = queued
    queued = []
    busy = true
    const writes = batch.map((q) => {
      let p: Promise<unknown>
      try {
        p = write(...q.args)
      } catch (e) {
        p = Promise.reject(e)
      }
      return p.then(q.resolve, q.reject)
    })
    void Promise.all(writes).then(() => {
      busy = false
      if (queued.length > 0) flush()
    })
  }
  return (...args) =>
    new Promise<void>((resolve, reject) => {
      queued.push({ args, resolve, reject })
      if (!busy) flush()
    })
}
