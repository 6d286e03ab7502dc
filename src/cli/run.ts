import { TeaError } from '../core/errors.ts'
import { sortableId } from '../core/ids.ts'
import { requireAgent } from '../agent/load.ts'
import { startRun } from '../engine/lifecycle.ts'
import { buildRegistry } from '../features.ts'
import { parseArgs, type FlagSpecs } from './args.ts'
import { EXIT } from './exit.ts'
import { readInput } from './input.ts'
import type { Command } from './io.ts'
import { leanLoad } from './lean.ts'
import { dataDirOf, eventSink, modelClient, openStore, reportRun } from './run-output.ts'
import { stopOnSignals } from './signals.ts'

/** The flags `tea run` and `tea resume` share. */
export const RUN_FLAGS = {
  input: { type: 'string', short: 'i' },
  set: { type: 'string', multiple: true },
  model: { type: 'string' },
  'data-dir': { type: 'string' },
  stream: { type: 'boolean' },
  output: { type: 'string', short: 'o' },
  trace: { type: 'string' },
  record: { type: 'string' },
  replay: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} satisfies FlagSpecs

const FLAGS = { ...RUN_FLAGS, 'run-id': { type: 'string' } } satisfies FlagSpecs

export const RUN_HELP = `Usage: tea run <agent.yaml> [options]

Runs an agent. The final state is printed as JSON on stdout; progress goes to stderr.
Every step is checkpointed under the data dir, so a failed, interrupted or killed run can be resumed.

Options:
  -i, --input JSON|@file.json|@file.yaml   initial state (a JSON object), merged over the agent's initial_state
      --set key=value        set one input key (dots nest; the value is parsed as JSON when it can be)
      --model SPEC           override settings.llm.model, e.g. ollama:qwen2.5:1.5b or openai:gpt-4o-mini
      --data-dir DIR         where runs are stored (default: $TEA_DATA_DIR, else ./.tea)
      --run-id ID            name the run (default: a sortable random id, printed at start)
      --stream               print NDJSON events on stdout instead of the final state
  -o, --output FILE          write the final state to FILE instead of stdout
      --trace FILE           write every event, timestamped, as NDJSON to FILE
      --record CASSETTE      record model exchanges to a JSONL cassette
      --replay CASSETTE      answer model calls from a cassette (no model server needed)
  -q, --quiet                no progress on stderr

Exit codes: 0 completed, 1 failed (resumable), 2 bad usage or invalid agent, 3 paused at an interrupt,
130 stopped by SIGINT/SIGTERM after the current checkpoint.
Environment: OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY, TEA_DATA_DIR.
`

export const runCommand: Command = async (argv, io) => {
  const { flags, positionals } = parseArgs(argv, FLAGS, 'run')
  if (flags.help) {
    io.out(RUN_HELP)
    return EXIT.ok
  }
  if (positionals.length !== 1) throw new TeaError('USAGE', `run: expected one agent file, got ${positionals.length}`, { hint: 'tea run <agent.yaml>' })
  const registry = buildRegistry()
  const spec = leanLoad(() => requireAgent(positionals[0]!, registry))
  const input = readInput(flags.input, flags.set, io.cwd)
  const dataDir = dataDirOf(flags['data-dir'], io)
  const store = await openStore(dataDir)
  const stop = stopOnSignals(io, 'tea')
  try {
    const services = { store, registry, dataDir, llm: modelClient(io, flags), emit: eventSink(io, flags), signal: stop.signal, ...(flags.model && { model: flags.model }) }
    const result = await startRun(spec, services, { runId: flags['run-id'] ?? sortableId(), input })
    return reportRun(io, result, flags, dataDir)
  } finally {
    stop.dispose()
    await store.close()
  }
}
