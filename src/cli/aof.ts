/**
 * What `tea aof …` does (SPEC §3.9; definitions, flags and help in commands/aof.ts). Each body reads its typed
 * flags and returns an exit code; errors are printed and mapped by `runMain`. `send` exits 0 whatever the outcome:
 * the outcome is the answer.
 */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { formatIssue } from '../core/issues.ts'
import { initDataDir, lintDataDir, poll, schedulerPass } from '../aof/index.ts'
import { fsTaskStore } from '../aof/store/fs/store.ts'
import { contextOf, json, parseNow, requireTaskId } from './aof-common.ts'
import { type StoreFlags, storeOf, withStore } from './aof-store.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'

interface DataDir {
  'data-dir'?: string
}

/** On NATS there are no folders: opening the store creates its buckets and stream (idempotent, as on disk). */
export async function initCommand({ flags }: { flags: StoreFlags }, io: Io): Promise<number> {
  const where = await withStore(flags, io, async (store) => {
    if (store.kind === 'fs') {
      initDataDir(contextOf(flags['data-dir'], io))
      return dataDirOf(flags['data-dir'], io)
    }
    const p = io.env.TEA_NATS_PROJECT || 'tea'
    return `${store.where}: KV buckets ${p}_tasks and ${p}_runs, object store ${p}_files, stream ${p}_events`
  })
  io.out(`initialized ${where}\n`)
  return EXIT.ok
}

export async function leaseCommand(
  { args, flags }: { args: { id: string }; flags: StoreFlags & { agent: string; 'ttl-ms': number; 'heartbeat-ttl-ms': number } },
  io: Io,
): Promise<number> {
  const id = requireTaskId(args.id)
  const r = await withStore(flags, io, (store) =>
    store.lease(id, flags.agent, { ttlMs: flags['ttl-ms'], heartbeatTtlMs: flags['heartbeat-ttl-ms'] }),
  )
  io.out(
    json({
      taskId: id,
      agent: flags.agent,
      status: r.task.status,
      runId: r.run.runId,
      lease: r.task.data.lease,
      heartbeatExpiresAt: r.heartbeat.expiresAt,
      renewed: r.renewed,
    }),
  )
  return EXIT.ok
}

export async function heartbeatCommand(
  { args, flags }: { args: { id: string }; flags: StoreFlags & { agent: string; 'ttl-ms': number } },
  io: Io,
): Promise<number> {
  const id = requireTaskId(args.id)
  io.out(json(await withStore(flags, io, (store) => store.heartbeat(id, flags.agent, { ttlMs: flags['ttl-ms'] }))))
  return EXIT.ok
}

export async function sendCommand(
  { args, flags }: { args: { file?: string }; flags: StoreFlags & { 'no-route'?: boolean } },
  io: Io,
): Promise<number> {
  if (flags['no-route'] && !(flags.nats ?? io.env.TEA_NATS_URL)) {
    throw new TeaError('USAGE', '--no-route leaves the message to a router service on NATS: give --nats URL (or set TEA_NATS_URL)')
  }
  const file = args.file ?? '-'
  let text: string
  try {
    text = file === '-' ? await io.readStdin() : readFileSync(resolve(io.cwd, file), 'utf8')
  } catch (e) {
    throw new TeaError('USAGE', `cannot read ${file}: ${(e as Error).message}`)
  }
  const { queueOn, routeOn } = await import('../aof/roles/router.ts')
  const outcome = await withStore(flags, io, (store) => (flags['no-route'] ? queueOn(store, text) : routeOn(store, text)))
  io.out(`${JSON.stringify(outcome)}\n`)
  return EXIT.ok
}

export async function sessionEndCommand({ flags }: { flags: StoreFlags }, io: Io): Promise<number> {
  const { sessionEnd } = await import('../aof/roles/session-end.ts')
  const entries = await withStore(flags, io, (store) => sessionEnd(store))
  io.out(json(entries))
  return EXIT.ok
}

export async function pollCommand(
  { flags }: { flags: StoreFlags & { 'dry-run': boolean; now?: string; 'heartbeat-ttl-ms': number } },
  io: Io,
): Promise<number> {
  if (flags.nats !== undefined || io.env.TEA_NATS_URL) {
    // On NATS staleness is judged by the server's clock (docs/fleet.md, Leases): a time given here cannot apply.
    if (flags.now !== undefined) throw new TeaError('USAGE', '--now cannot be used with --nats: the server time decides staleness')
    const options = { dryRun: flags['dry-run'], heartbeatTtlMs: flags['heartbeat-ttl-ms'] }
    io.out(json(await withStore(flags, io, (store) => schedulerPass(store, options))))
    return EXIT.ok
  }
  const now = parseNow(flags.now)
  const result = await poll(contextOf(flags['data-dir'], io, now), { dryRun: flags['dry-run'], heartbeatTtlMs: flags['heartbeat-ttl-ms'] })
  io.out(json(result))
  return EXIT.ok
}

export async function eventsCommand({ flags }: { flags: StoreFlags & { task?: string; type?: string } }, io: Io): Promise<number> {
  if (flags.task !== undefined) requireTaskId(flags.task, '--task to be a task id')
  const filter = { ...(flags.task ? { taskId: flags.task } : {}), ...(flags.type ? { type: flags.type } : {}) }
  const events = await withStore(flags, io, (store) => store.readEvents(filter))
  io.out(events.map((e) => `${JSON.stringify(e)}\n`).join(''))
  return EXIT.ok
}

export async function lintCommand({ flags }: { flags: StoreFlags & { json: boolean } }, io: Io): Promise<number> {
  const { lintStore } = await import('../aof/roles/lint-store.ts')
  const problems = await withStore(flags, io, async (store) =>
    store.kind === 'fs' ? lintDataDir(contextOf(flags['data-dir'], io)) : lintStore(store),
  )
  if (flags.json) io.out(json(problems))
  else if (problems.length === 0) io.out('OK: no problems\n')
  else for (const p of problems) io.out(`${formatIssue(p)}\n`)
  return problems.length === 0 ? EXIT.ok : EXIT.failed
}

/**
 * `tea aof export` (NATS → the data dir) and `import` (the data dir → NATS): both stores are opened, the copy is
 * made (copy-project.ts: idempotent, nothing lost), and the report printed as JSON. Exit 1 when an entry could not
 * be read and so was not copied.
 */
export async function copyCommand(direction: 'export' | 'import', { flags }: { flags: StoreFlags }, io: Io): Promise<number> {
  if (!(flags.nats ?? io.env.TEA_NATS_URL)) {
    throw new TeaError('USAGE', `tea aof ${direction} needs a NATS server: give --nats URL (or set TEA_NATS_URL)`)
  }
  const { copyProject } = await import('../aof/roles/copy-project.ts')
  const ctx = contextOf(flags['data-dir'], io)
  const nats = await storeOf(flags, io)
  try {
    const fs = fsTaskStore(ctx)
    if (direction === 'export') initDataDir(ctx)
    const report = direction === 'export' ? await copyProject(nats, fs) : await copyProject(fs, nats)
    for (const p of report.notCopied) io.err(`warning: not copied: ${formatIssue(p)}\n`)
    for (const id of report.keptNewer) io.err(`note: ${id} is newer on ${report.to}; kept it\n`)
    io.out(json(report))
    return report.notCopied.length === 0 ? EXIT.ok : EXIT.failed
  } finally {
    await nats.close()
  }
}
