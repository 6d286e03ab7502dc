/**
 * Routing on NATS (issue 17): messages per second through `tea aof send`'s path (recorded and routed in-process,
 * `routeOn`, one connection) and through router services: `send --no-route`'s queueing, then 1, 2 and 4
 * `tea aof route --once` processes (from source) draining the durable consumer, timed from the first message line
 * any of them prints to the last (their start-up left out). The messages: M status updates with a Work Log note
 * over T leased tasks. Also the server bytes a routed message costs.
 *
 *   npx tsx bench/fleet-route.bench.ts [--messages 200] [--tasks 20]
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { connectNats } from '../src/aof/store/nats/client.ts'
import { type NatsTaskStore, openNatsStore } from '../src/aof/store/nats/store.ts'
import { queueOn, routeOn } from '../src/aof/roles/router.ts'
import { startNatsServer } from '../test/support/nats-server.ts'

const { values } = parseArgs({ options: { messages: { type: 'string', default: '200' }, tasks: { type: 'string', default: '20' } } })
const count = Number(values.messages)
const taskCount = Number(values.tasks)

const BIN = join(import.meta.dirname, '..', 'src', 'cli', 'bin.ts')
const server = await startNatsServer()
let project = 0

async function setup(): Promise<{ p: string; store: NatsTaskStore; messages: unknown[] }> {
  const p = `b${++project}`
  const store = await openNatsStore({ url: server.url, project: p })
  const ids: string[] = []
  for (let i = 0; i < taskCount; i++) {
    const t = await store.create({ title: `t${i}`, status: 'ready', agent: 'a' })
    await store.lease(t.id, 'a')
    ids.push(t.id)
  }
  const messages = Array.from({ length: count }, (_, i) => {
    const taskId = ids[i % ids.length]!
    const sentAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
    const payload = { taskId, agentId: 'a', notes: `note ${i}` }
    return { protocol: 'aof', version: 1, type: 'status.update', taskId, fromAgent: 'a', toAgent: 'o', sentAt, payload }
  })
  return { p, store, messages }
}

function report(what: string, ms: number): void {
  console.log(
    `${what.padEnd(28)} ${(ms / 1000).toFixed(2)} s  ${((count * 1000) / ms).toFixed(1)} messages/s  ${(ms / count).toFixed(1)} ms each`,
  )
}

try {
  {
    const { p, store, messages } = await setup()
    const c = await connectNats({ url: server.url })
    const before = (await c.jsm.streams.info(`${p}_events`)).state.bytes + (await c.jsm.streams.info(`KV_${p}_runs`)).state.bytes
    const t0 = performance.now()
    for (const m of messages) await routeOn(store, m)
    report('send (routed in-process)', performance.now() - t0)
    const after = (await c.jsm.streams.info(`${p}_events`)).state.bytes + (await c.jsm.streams.info(`KV_${p}_runs`)).state.bytes
    console.log(`server bytes per routed message: ${Math.round((after - before) / count)} (the message, its events, its mark)`)
    await c.nc.close()
    await store.close()
  }
  for (const routers of [1, 2, 4]) {
    const { p, store, messages } = await setup()
    for (const m of messages) await queueOn(store, m)
    const stamps: number[] = []
    const counts = await Promise.all(
      Array.from({ length: routers }, () => {
        const c = spawn(process.execPath, ['--import', 'tsx', BIN, 'aof', 'route', '--once', '--nats', server.url], {
          env: { ...process.env, TEA_NATS_PROJECT: p },
          stdio: ['ignore', 'pipe', 'ignore'],
        })
        let lines = 0
        c.stdout.on('data', (b: Buffer) => {
          for (const ch of b.toString()) if (ch === '\n') lines++, stamps.push(performance.now())
        })
        return new Promise<number>((r) => c.on('exit', () => r(lines)))
      }),
    )
    report(`route service, ${routers} process(es)`, Math.max(...stamps) - Math.min(...stamps))
    console.log(`  routed by each: ${counts.join(', ')}`)
    await store.close()
  }
} finally {
  await server.cleanup()
}
