/** What `tea resume` does (its definition, flags and help are in commands/run.ts). */

import { isTeaError, TeaError } from '../core/errors.ts'
import { requireAgentLoading } from '../agent/load.ts'
import { resumeRun } from '../engine/lifecycle.ts'
import { lazyRegistry } from '../catalog.ts'
import { requireAgentPath } from './agent-path.ts'
import { aofRouterOf } from './aof-router.ts'
import { dataDirOf } from './data-dir.ts'
import { readInput } from './input.ts'
import type { Io } from './io.ts'
import { cliLoading } from './lean.ts'
import type { RunFlags } from './run.ts'
import { openStore, reportRun, runServices } from './run-output.ts'
import { stopOnSignals } from './signals.ts'

export async function resumeCommand({ args, flags }: { args: { runId: string }; flags: RunFlags }, io: Io): Promise<number> {
  const { runId } = args
  const dataDir = dataDirOf(flags['data-dir'], io)
  const edits = readInput(flags.input, flags.set, io.cwd)
  const aof = aofRouterOf(flags, io)
  const store = await openStore(dataDir)
  const registry = lazyRegistry() // loads the actions the agent names (src/catalog.ts)
  const stop = stopOnSignals(io, 'tea')
  try {
    const opened = { store, registry, dataDir, signal: stop.signal, ...(aof && { aof }) }
    const result = await resumeRun(
      { ...(await runServices(io, flags, opened)), warn: (w) => io.err(`tea: warning: ${w.message}\n`) },
      {
        runId,
        edits,
        load: (path, runLanguages) => {
          requireAgentPath(path, io.cwd) // the file the run started from, moved or deleted since
          return requireAgentLoading(path, registry, undefined, { ...cliLoading(path), ...(runLanguages && { runLanguages }) })
        },
      },
    ).catch((e: unknown) => {
      if (!isTeaError(e, 'RUN_NOT_FOUND')) throw e
      throw new TeaError('RUN_NOT_FOUND', `no run ${runId} in ${dataDir}`, {
        hint: "'tea runs' lists the runs there; pass --data-dir if they live elsewhere",
      })
    })
    return reportRun(io, result, flags, dataDir)
  } finally {
    stop.dispose()
    await store.close()
    await aof?.close()
  }
}
