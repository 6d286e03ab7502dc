import { TeaError } from '../core/errors.ts'
import { buildRegistry } from '../actions/index.ts'
import { requireAgent } from '../agent/load.ts'
import { parseArgs } from './args.ts'
import { EXIT } from './exit.ts'
import { readInput } from './input.ts'
import type { Command } from './io.ts'
import { dataDirOf, execute, modelClient, openStore, RUN_FLAGS, runningElsewhere } from './session.ts'
import { leanLoad } from './lean.ts'

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
  const store = await openStore(dataDir)
  const registry = buildRegistry()
  let start
  let spec
  let llm
  try {
    const run = await store.getRun(runId)
    if (!run) throw new TeaError('RUN_NOT_FOUND', `no run ${runId} in ${dataDir}`, { hint: "'tea runs' lists the runs there; pass --data-dir if they live elsewhere" })
    if (run.status === 'completed') throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} already completed`)
    if (runningElsewhere(run)) {
      throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} is still running (pid ${run.pid})`)
    }
    spec = leanLoad(() => requireAgent(run.agentPath, registry))
    if (spec.hash !== run.agentHash) io.err(`tea: warning: ${run.agentPath} changed since run ${runId} started; resuming with the current file\n`)
    const checkpoint = await store.loadLatest(runId)
    if (!checkpoint) throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} has no checkpoint to resume from`)
    const edits = readInput(flags.input, flags.set, io.cwd)
    llm = modelClient(io, spec, flags)
    const state = { ...checkpoint.state, ...edits }
    if (Object.keys(edits).length) await store.snapshot(runId, { step: checkpoint.step, node: checkpoint.node, state, cursor: checkpoint.cursor }, spec.settings.checkpoint_keep)
    await store.updateRun(runId, { status: 'running', pid: process.pid, updatedAt: Date.now() })
    start = { state, cursor: checkpoint.cursor, step: checkpoint.step, resumed: true }
  } catch (e) {
    await store.close()
    throw e
  }
  return execute(io, spec, registry, store, llm, runId, dataDir, start, flags)
}
