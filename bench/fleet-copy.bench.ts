/**
 * `tea aof import` / `export` (issue 17): how long moving a folder project onto NATS and back takes, through the
 * same code as the commands (copy-project.ts over the two stores). The project: T tasks, each leased (a run and a
 * heartbeat), half with a routed status update (a Work Log entry), each with one companion file of F bytes. Reports
 * tasks/s for import, export and a second (idempotent, nothing written) import, and the bytes JetStream holds.
 *
 *   npx tsx bench/fleet-copy.bench.ts [--tasks 200] [--file-bytes 4096]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { copyProject } from '../src/aof/roles/copy-project.ts'
import { aofContext } from '../src/aof/index.ts'
import { connectNats } from '../src/aof/store/nats/client.ts'
import { openNatsStore } from '../src/aof/store/nats/store.ts'
import { routeOn } from '../src/aof/roles/router.ts'
import { fsTaskStore } from '../src/aof/store/fs/store.ts'
import { startNatsServer } from '../test/support/nats-server.ts'

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '200' }, 'file-bytes': { type: 'string', default: '4096' } } })
const tasks = Number(values.tasks)
const fileBytes = Number(values['file-bytes'])

const dir = mkdtempSync(join(tmpdir(), 'tea-bench-copy-'))
const server = await startNatsServer()
try {
  const source = fsTaskStore(aofContext(join(dir, 'a')))
  const blob = new Uint8Array(fileBytes).map((_, i) => i % 251)
  for (let i = 0; i < tasks; i++) {
    const t = await source.create({ title: `task ${i}`, status: 'ready', agent: 'swe' })
    await source.lease(t.id, 'swe')
    if (i % 2 === 0) {
      const sentAt = new Date(Date.now() + 1_000).toISOString()
      const msg = { protocol: 'aof', version: 1, type: 'status.update', taskId: t.id, fromAgent: 'swe', toAgent: 'ops', sentAt }
      await routeOn(source, { ...msg, payload: { taskId: t.id, agentId: 'swe', progress: `step ${i}` } })
    }
    await source.writeFile(t.id, 'outputs/data.bin', blob)
  }
  const nats = await openNatsStore({ url: server.url, project: 'bench' })
  const timed = async (what: string, fn: () => Promise<{ events: number; files: number }>) => {
    const t0 = performance.now()
    const r = await fn()
    const s = (performance.now() - t0) / 1000
    console.log(`${what.padEnd(16)} ${s.toFixed(2)} s  ${(tasks / s).toFixed(1)} tasks/s  (${r.files} files, ${r.events} events written)`)
  }
  await timed('import', () => copyProject(source, nats))
  await timed('import again', () => copyProject(source, nats))
  await timed('export', () => copyProject(nats, fsTaskStore(aofContext(join(dir, 'b')))))
  await nats.close()
  const c = await connectNats({ url: server.url })
  let bytes = 0
  for (const name of ['KV_bench_tasks', 'KV_bench_runs', 'OBJ_bench_files', 'bench_events'])
    bytes += (await c.jsm.streams.info(name)).state.bytes
  await c.nc.close()
  console.log(`server bytes     ${bytes} (${Math.round(bytes / tasks)} per task, ${fileBytes} of it the companion file)`)
} finally {
  await server.cleanup()
  rmSync(dir, { recursive: true, force: true })
}
