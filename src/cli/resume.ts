import { isTeaError, TeaError } from '../core/errors.ts'
import { requireAgent } from '../agent/load.ts'
import { resumeRun } from '../engine/lifecycle.ts'
import { buildRegistry } from '../features.ts'
import { parseArgs } from './args.ts'
import { EXIT } from './exit.ts'
import { readInput } from './input.ts'
import type { Command } from './io.ts'
import { leanLoad } from './lean.ts'
import { RUN_FLAGS } from './run.ts'
import { dataDirOf, eventSink, modelClient, openStore, reportRun } from './run-output.ts'
import { stopOnSignals } from './signals.ts'

const FLAGS = RUN_FLAGS

export const RESUME_HELP = `Usage: tea resume <run-id> [options]

Continues a run that failed, was paused at an interrupt, or was stopped or killed, from its last checkpoint.
Nodes already recorded are not run again; the node that was in flight runs again. A node paused by
'interrupt: before' runs now; one paused 'after' is not repeated. Interrupts still apply to later nodes.

Options:
  -i, --input JSON|@file     merge these keys into the saved state first (e.g. a human's answer)
      --set key=value        set one key in the saved state
      --model SPEC           override settings.llm.model for the rest of the run
      --data-dir DIR         where runs are stored (default: $TEA_DATA_DIR, else ./.tea)
      --stream, -o FILE, --trace FILE, --record/--replay CASSETTE, -q    as for tea run
`

export const resumeCommand: Command = async (argv, io) => {
  const { flags, positionals } = parseArgs(argv, FLAGS, 'resume')
  if (flags.help) {
    io.out(RESUME_HELP)
    return EXIT.ok
  }
  if (positionals.length !== 1) throw new TeaError('USAGE', 'resume: expected one run id', { hint: "'tea runs' lists them" })
  const runId = positionals[0]!
  const dataDir = dataDirOf(flags['data-dir'], io)
  const edits = readInput(flags.input, flags.set, io.cwd)
  const store = await openStore(dataDir)
  const registry = buildRegistry()
  const stop = stopOnSignals(io, 'tea')
  try {
    const result = await resumeRun(
      {
        store, registry, dataDir, llm: modelClient(io, flags), emit: eventSink(io, flags), signal: stop.signal,
        ...(flags.model && { model: flags.model }),
        warn: (w) => io.err(`tea: warning: ${w.message}\n`),
      },
      { runId, edits, load: (path) => leanLoad(() => requireAgent(path, registry)) },
    ).catch((e: unknown) => {
      if (!isTeaError(e, 'RUN_NOT_FOUND')) throw e
      throw new TeaError('RUN_NOT_FOUND', `no run ${runId} in ${dataDir}`, { hint: "'tea runs' lists the runs there; pass --data-dir if they live elsewhere" })
    })
    return reportRun(io, result, flags, dataDir)
  } finally {
    stop.dispose()
    await store.close()
  }
}
