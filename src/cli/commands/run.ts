/** `tea run` and `tea resume`: the flags they share and what each runs (../run.ts, ../resume.ts, loaded on use). */

import { defineCommand } from '../command.ts'
import { DATA_DIR, MODEL, NATS_FLAGS, REPLAY } from './flags.ts'

const RUN_FLAGS = {
  input: {
    type: 'string',
    short: 'i',
    value: 'JSON|@file.json|@file.yaml',
    description: "the input: a JSON object, or a file of one (.yaml/.yml files are read as YAML); merged over the agent's initial_state",
  },
  set: {
    type: 'list',
    value: 'key=value',
    description: 'set one input key, after -i; dots nest, and the value is parsed as JSON when it can be',
  },
  model: MODEL,
  'data-dir': DATA_DIR,
  stream: { type: 'boolean', description: 'print NDJSON events on stdout instead of the final state' },
  output: { type: 'string', short: 'o', value: 'FILE', description: 'write the final state to FILE instead of stdout' },
  trace: { type: 'string', value: 'FILE', description: 'also write every event, timestamped, as NDJSON to FILE' },
  record: { type: 'string', value: 'CASSETTE', description: 'record every model exchange to a JSONL cassette' },
  replay: REPLAY,
  quiet: { type: 'boolean', short: 'q', description: 'no progress on stderr (the final error or pause message is still printed)' },
  // The aof.* actions' task store (docs/fleet.md): connected on the first AOF/1 message the run sends.
  ...NATS_FLAGS,
} as const

const EXITS = `Exit codes: 0 completed, 1 failed (resumable), 2 bad usage or invalid agent, 3 paused at an interrupt,
130 stopped by SIGINT/SIGTERM after the current checkpoint.
Environment: OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY, TEA_DATA_DIR, TEA_NATS_URL (the aof.* actions' store).`

export const run = defineCommand({
  name: 'run',
  summary: 'run an agent; final state as JSON on stdout, progress on stderr',
  description: `Every step is checkpointed under the data dir, so a failed, paused, stopped or killed run can be resumed.`,
  args: [{ name: 'agent', value: 'agent.yaml', description: 'the agent file to run' }],
  flags: {
    ...RUN_FLAGS,
    'run-id': { type: 'string', value: 'ID', description: 'name the run (default: a sortable random id, printed at start)' },
  },
  notes: EXITS,
  run: async (input, io) => (await import('../run.ts')).runCommand(input, io),
})

export const resume = defineCommand({
  name: 'resume',
  summary: 'continue a failed, paused, stopped or killed run from its last checkpoint',
  description: `Nodes already recorded do not run again; the node in flight runs again. A node paused by
'interrupt: before' runs now; one paused 'after' is not repeated. Interrupts still apply to later nodes.
-i and --set merge edits into the saved state first (a person's answer at an interrupt). Without --model the
model comes from the agent file, which is read again (a changed file is used, with a warning).`,
  args: [{ name: 'runId', value: 'run-id', description: "the run to continue ('tea runs' lists them)" }],
  flags: RUN_FLAGS,
  notes: EXITS,
  run: async (input, io) => (await import('../resume.ts')).resumeCommand(input, io),
})
