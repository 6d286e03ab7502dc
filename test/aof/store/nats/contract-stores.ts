import { openNatsStore } from '../../../../src/aof/store/nats/store.ts'
import type { TaskStore } from '../../../../src/aof/store/port.ts'
import { type NatsServer, startNatsServer } from '../../../support/nats-server.ts'

/**
 * The NATS side of a contract suite (store-contract.ts, route-contract.ts, bdd-contract.ts): one server for the test
 * file, started by the first test; each test gets its own project (buckets and stream), so tests never see each other.
 */
export function natsStores(prefix: string) {
  let server: NatsServer | undefined
  let n = 0
  const open = async () => {
    server ??= await startNatsServer()
    const url = server.url
    const project = `${prefix}${process.pid}_${++n}`
    const opened: TaskStore[] = []
    const another = async () => {
      const s = await openNatsStore({ url, project })
      opened.push(s)
      return s
    }
    return {
      store: await another(),
      other: another,
      cleanup: async () => {
        for (const s of opened) await s.close()
      },
    }
  }
  const teardown = async () => {
    await server?.cleanup()
    server = undefined
  }
  return { open, teardown }
}
