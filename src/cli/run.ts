/** What `tea run` does (its definition, flags and help are in commands/run.ts). */

import { sortableId } from '../core/ids.ts'
import { requireAgentLoading } from '../agent/load.ts'
import { startRun } from '../engine/lifecycle.ts'
import { lazyRegistry } from '../catalog.ts'
import { requireAgentPath } from './agent-path.ts'
import { aofRouterOf } from './aof-router.ts'
import type { StoreFlags } from './aof-store.ts'
import { dataDirOf } from './data-dir.ts'
import { readInput } from './input.ts'
import type { Io } from './io.ts'
import { cliLoading } from './lean.ts'
import { openStore, type OutputOptions, reportRun, runServices } from './run-output.ts'
import { stopOnSignals } from './signals.ts'

/** The flags `tea run` and `tea resume` share, as their bodies read them. */
export interface RunFlags extends OutputOptions, StoreFlags {
  input?: string
  set: string[]
  model?: string
  'data-dir'?: string
}

export async function runCommand(
  { args, flags }: { args: { agent: string }; flags: RunFlags & { 'run-id'?: string } },
  io: Io,
): Promise<number> {
  // Only the action modules the agent names are loaded (src/catalog.ts): a run's start is a quality bar (SPEC §4).
  const registry = lazyRegistry()
  const warn = (w: string): void => io.err(`tea: warning: ${w}\n`)
  requireAgentPath(args.agent, io.cwd)
  const spec = await requireAgentLoading(args.agent, registry, warn, cliLoading(args.agent))
  const input = readInput(flags.input, flags.set, io.cwd)
  const dataDir = dataDirOf(flags['data-dir'], io)
  const aof = aofRouterOf(flags, io)
  const store = await openStore(dataDir)
  const stop = stopOnSignals(io, 'tea')
  try {
    const services = await runServices(io, flags, { store, registry, dataDir, signal: stop.signal, ...(aof && { aof }) })
    const result = await startRun(spec, services, { runId: flags['run-id'] ?? sortableId(), input })
    return reportRun(io, result, flags, dataDir)
  } finally {
    stop.dispose()
    await store.close()
    await aof?.close()
  }
}
