import { openNatsStore } from '../../../src/aof/nats/store.ts'
import type { TaskStore } from '../../../src/aof/store-port.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../../support/nats-server.ts'
import { reportSkip } from '../../support/skip.ts'
import { routeContract } from '../route-contract.ts'

// One server for the file; each test gets its own project (buckets and stream), so tests never see each other.
let server: NatsServer | undefined
let n = 0
const missing = natsServerMissing()

if (missing) reportSkip(`router and files contract: NATS JetStream: ${missing}`)
else
  routeContract(
    'NATS JetStream',
    async () => {
      server ??= await startNatsServer()
      const url = server.url
      const project = `r${process.pid}_${++n}`
      const opened: TaskStore[] = []
      const open = async () => {
        const s = await openNatsStore({ url, project })
        opened.push(s)
        return s
      }
      return {
        store: await open(),
        other: open,
        cleanup: async () => {
          for (const s of opened) await s.close()
        },
      }
    },
    async () => {
      await server?.cleanup()
      server = undefined
    },
  )
