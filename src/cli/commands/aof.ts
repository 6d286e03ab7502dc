/** `tea aof …` (SPEC §3.9, docs/aof.md): the AOF/1 task protocol from the command line (../aof.ts, loaded on use). */

import { defineCommand } from '../command.ts'
import { task } from './aof-task.ts'
import { DATA_DIR, TASK_ID } from './flags.ts'
import { NATS, NATS_CREDS } from './flags.ts'

const AGENT = { type: 'string', value: 'A', required: true, description: 'the agent id the lease is held in' } as const
const TTL = (what: string, ms: number) => ({ type: 'ms', default: ms, description: `${what}, in milliseconds` }) as const

const init = defineCommand({
  name: 'init',
  summary: 'create the folder layout (tasks/<status>/, state/runs/, events/) in the data dir',
  flags: { 'data-dir': DATA_DIR },
  run: async (input, io) => (await import('../aof.ts')).initCommand(input, io),
})

const lease = defineCommand({
  name: 'lease',
  summary: "take (or renew) a task's lease: ready → in-progress, a new run",
  description: 'Prints {taskId, agent, status, runId, lease, heartbeatExpiresAt, renewed} as JSON.',
  args: [TASK_ID],
  flags: { 'data-dir': DATA_DIR, agent: AGENT, 'ttl-ms': TTL('lease length', 600_000), 'heartbeat-ttl-ms': TTL('heartbeat TTL', 300_000) },
  run: async (input, io) => (await import('../aof.ts')).leaseCommand(input, io),
})

const heartbeat = defineCommand({
  name: 'heartbeat',
  summary: "refresh the run's heartbeat (and extend the lease)",
  args: [TASK_ID],
  flags: { 'data-dir': DATA_DIR, agent: AGENT, 'ttl-ms': TTL('heartbeat TTL', 300_000) },
  run: async (input, io) => (await import('../aof.ts')).heartbeatCommand(input, io),
})

const send = defineCommand({
  name: 'send',
  summary: 'route one AOF/1 message; prints {"outcome", …} and exits 0 whatever the outcome',
  description: 'Reads one message (JSON, `AOF/1 {…}` or plain text) from FILE, or from stdin when FILE is - or absent.',
  args: [{ name: 'file', value: 'FILE|-', description: 'the message file (default: stdin)', optional: true }],
  flags: { 'data-dir': DATA_DIR },
  run: async (input, io) => (await import('../aof.ts')).sendCommand(input, io),
})

const sessionEnd = defineCommand({
  name: 'session-end',
  summary: 'apply the run results of in-progress tasks',
  flags: { 'data-dir': DATA_DIR },
  run: async (input, io) => (await import('../aof.ts')).sessionEndCommand(input, io),
})

const poll = defineCommand({
  name: 'poll',
  summary: 'recover tasks whose heartbeat is stale; prints the actions as JSON',
  flags: {
    'data-dir': DATA_DIR,
    nats: NATS,
    'nats-creds': NATS_CREDS,
    'dry-run': { type: 'boolean', description: 'say what would be done, and do nothing' },
    now: { type: 'string', value: 'ISO', description: 'the time to judge staleness at, e.g. 2026-02-10T10:05:00Z (default: now)' },
    'heartbeat-ttl-ms': TTL('heartbeat TTL for heartbeats without an expiresAt', 300_000),
  },
  run: async (input, io) => (await import('../aof.ts')).pollCommand(input, io),
})

const events = defineCommand({
  name: 'events',
  summary: 'the event log as NDJSON',
  flags: {
    'data-dir': DATA_DIR,
    task: { type: 'string', value: 'TASK-ID', description: "only this task's events" },
    type: { type: 'string', value: 'TYPE', description: 'only events of this type, e.g. task.transitioned' },
  },
  run: async (input, io) => (await import('../aof.ts')).eventsCommand(input, io),
})

const lint = defineCommand({
  name: 'lint',
  summary: 'check every task file; exit 0 when clean, 1 with every problem and its path',
  flags: { 'data-dir': DATA_DIR, json: { type: 'boolean', description: 'print the problems as a JSON array' } },
  run: async (input, io) => (await import('../aof.ts')).lintCommand(input, io),
})

export const aof = defineCommand({
  name: 'aof',
  summary: 'the AOF/1 filesystem task protocol: tasks, messages, leases, scheduler (docs/aof.md)',
  notes: 'Exit codes: 0 ok, 1 a failure (a refused transition, lint problems, a missing task), 2 bad usage.',
  subcommands: [init, task, lease, heartbeat, send, sessionEnd, poll, events, lint],
})
