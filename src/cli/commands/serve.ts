/** `tea serve` and `tea doctor` (../serve.ts, ../doctor.ts, loaded on use). */

import { defineCommand } from '../command.ts'
import { DATA_DIR } from './flags.ts'

export const serve = defineCommand({
  name: 'serve',
  summary: "run the board's daemon: an HTTP API and status page, schedules, resume after power loss",
  description: `Starts, lists, follows, resumes and cancels runs of the agents in the agents folder over HTTP
(docs/serve.md). At start, runs left unfinished by a power cut, a kill or a shutdown are resumed (unless
--no-resume). One tea serve per data dir. SIGTERM stops runs after their current checkpoint and exits 0.`,
  flags: {
    'data-dir': DATA_DIR,
    agents: { type: 'string', value: 'DIR', description: 'the agents the API may run', defaultText: "the config's, else ./agents" },
    listen: {
      type: 'string',
      value: 'HOST:PORT',
      description: 'where to listen; a non-loopback host needs --token-file',
      defaultText: '127.0.0.1:8765',
    },
    'token-file': { type: 'string', value: 'FILE', description: 'a file holding the bearer token every request must carry' },
    'max-concurrent': { type: 'int', min: 1, max: 1000, description: 'runs at once; more are queued', defaultText: '2' },
    'min-free-mb': {
      type: 'int',
      min: 0,
      max: 1 << 20,
      description: 'refuse to start a run when less memory is available (0: never)',
      defaultText: '128',
    },
    'no-resume': { type: 'boolean', description: 'do not resume the runs left unfinished at start' },
    'resume-limit': {
      type: 'int',
      min: 0,
      max: 1000,
      description: 'times in a row a run whose process died is resumed at start before it is failed (RESUME_LIMIT)',
      defaultText: '3',
    },
    'allow-host': {
      type: 'list',
      value: 'NAME',
      description: 'a Host name (NAME or NAME:PORT) the API answers besides loopback and --listen; repeatable',
    },
    config: { type: 'string', value: 'FILE', description: 'a serve config (YAML): agents, listen, limits, schedules' },
    replay: {
      type: 'string',
      value: 'CASSETTE',
      description: "answer every run's model calls from a JSONL cassette, resumes too (no model server is contacted)",
    },
    'print-systemd': { type: 'boolean', description: 'print a systemd unit for these flags and exit' },
  },
  notes: 'Exit codes: 0 stopped by SIGTERM/SIGINT, 1 another tea serve owns the data dir, 2 bad usage or an address it cannot listen on.',
  run: async (input, io) => (await import('../serve.ts')).serveCommand(input, io),
})

export const doctor = defineCommand({
  name: 'doctor',
  summary: 'check the board: model server, models pulled, data and cache dirs, glibc, memory, clock, features',
  description: `One line per check, ✓ or ✗ with the fix. Given agent files, also checks that they load, that this build
has the features they use, that every Ollama model they name is pulled, and that memory fits the largest.`,
  args: [{ name: 'agents', value: 'agent.yaml', description: 'agents to check for', variadic: true }],
  flags: { 'data-dir': DATA_DIR, json: { type: 'boolean', description: 'print {ok, checks: [{name, ok, detail, fix?}]} as JSON' } },
  notes: 'Exit codes: 0 every check passed, 1 one or more failed, 2 bad usage. Environment: OLLAMA_HOST, TEA_CACHE_DIR.',
  run: async (input, io) => (await import('../doctor.ts')).doctorCommand(input, io),
})
