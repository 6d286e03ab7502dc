// Child process of the lmdb-only test "records committed before a SIGKILL survive it": appends steps forever,
// printing each step number once its appendStep has resolved (committed), until the parent kills it.
import { openLmdbStore } from '../../src/store/lmdb-store.ts'

const store = openLmdbStore(process.argv[2]!)
await store.snapshot('crash', { step: 0, node: null, state: { n: 0 }, cursor: { next: 'a' } })
for (let i = 1; ; i++) {
  if (i % 25 === 0) await store.snapshot('crash', { step: i, node: 'a', state: { n: i }, cursor: { next: 'a' } }, 2)
  else await store.appendStep('crash', { step: i, node: 'a', update: { n: i }, cursor: { next: 'a' } })
  process.stdout.write(`${i}\n`)
}
