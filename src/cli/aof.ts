/**
 * What `tea aof …` does (SPEC §3.9; definitions, flags and help in commands/aof.ts). Each body reads its typed
 * flags and returns an exit code; errors are printed and mapped by `runMain`. `send` exits 0 whatever the outcome:
 * the outcome is the answer.
 */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { formatIssue } from '../core/issues.ts'
import { acquireLease, handleSessionEnd, heartbeat, initDataDir, lintDataDir, poll, readEvents, routeMessage } from '../aof/index.ts'
import { contextOf, json, parseNow, requireTaskId } from './aof-common.ts'
import { type StoreFlags, withStore } from './aof-store.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'

interface DataDir {
  'data-dir'?: string
}

export async function initCommand({ flags }: { flags: DataDir }, io: Io): Promise<number> {
  initDataDir(contextOf(flags['data-dir'], io))
  io.out(`initialized ${dataDirOf(flags['data-dir'], io)}\n`)
  return EXIT.ok
}

export async function leaseCommand(
  { args, flags }: { args: { id: string }; flags: DataDir & { agent: string; 'ttl-ms': number; 'heartbeat-ttl-ms': number } },
  io: Io,
): Promise<number> {
  const id = requireTaskId(args.id)
  const r = await acquireLease(contextOf(flags['data-dir'], io), id, flags.agent, {
    ttlMs: flags['ttl-ms'],
    heartbeatTtlMs: flags['heartbeat-ttl-ms'],
  })
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
  { args, flags }: { args: { id: string }; flags: DataDir & { agent: string; 'ttl-ms': number } },
  io: Io,
): Promise<number> {
  const id = requireTaskId(args.id)
  io.out(json(await heartbeat(contextOf(flags['data-dir'], io), id, flags.agent, { ttlMs: flags['ttl-ms'] })))
  return EXIT.ok
}

export async function sendCommand({ args, flags }: { args: { file?: string }; flags: DataDir }, io: Io): Promise<number> {
  const file = args.file ?? '-'
  let text: string
  try {
    text = file === '-' ? await io.readStdin() : readFileSync(resolve(io.cwd, file), 'utf8')
  } catch (e) {
    throw new TeaError('USAGE', `cannot read ${file}: ${(e as Error).message}`)
  }
  const outcome = await routeMessage(contextOf(flags['data-dir'], io), text)
  io.out(`${JSON.stringify(outcome)}\n`)
  return EXIT.ok
}

export async function sessionEndCommand({ flags }: { flags: DataDir }, io: Io): Promise<number> {
  io.out(json(await handleSessionEnd(contextOf(flags['data-dir'], io))))
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
    io.out(json(await withStore(flags, io, (store) => store.poll(options))))
    return EXIT.ok
  }
  const now = parseNow(flags.now)
  const result = await poll(contextOf(flags['data-dir'], io, now), { dryRun: flags['dry-run'], heartbeatTtlMs: flags['heartbeat-ttl-ms'] })
  io.out(json(result))
  return EXIT.ok
}

export async function eventsCommand({ flags }: { flags: DataDir & { task?: string; type?: string } }, io: Io): Promise<number> {
  if (flags.task !== undefined) requireTaskId(flags.task, '--task to be a task id')
  const events = readEvents(contextOf(flags['data-dir'], io), {
    ...(flags.task ? { taskId: flags.task } : {}),
    ...(flags.type ? { type: flags.type } : {}),
  })
  io.out(events.map((e) => `${JSON.stringify(e)}\n`).join(''))
  return EXIT.ok
}

export async function lintCommand({ flags }: { flags: DataDir & { json: boolean } }, io: Io): Promise<number> {
  const problems = lintDataDir(contextOf(flags['data-dir'], io))
  if (flags.json) io.out(json(problems))
  else if (problems.length === 0) io.out('OK: no problems\n')
  else for (const p of problems) io.out(`${formatIssue(p)}\n`)
  return problems.length === 0 ? EXIT.ok : EXIT.failed
}
