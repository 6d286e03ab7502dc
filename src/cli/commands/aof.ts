/** `tea aof …` (SPEC §3.9, docs/aof.md): the AOF/1 task protocol from the command line (../aof.ts, loaded on use). */

import { defineCommand } from '../command.ts'
import { task } from './aof-task.ts'
import { DATA_DIR, NATS_FLAGS, STORE_FLAGS, TASK_ID } from './flags.ts'

const AGENT = { type: 'string', value: 'A', required: true, description: 'the agent id the lease is held in' } as const
const TTL = (what: string, ms: number) => ({ type: 'ms', default: ms, description: `${what}, in milliseconds` }) as const

const init = defineCommand({
  name: 'init',
  summary: 'create the folder layout (tasks/<status>/, state/runs/, events/) in the data dir; with --nats, the buckets and stream',
  flags: STORE_FLAGS,
  run: async (input, io) => (await import('../aof.ts')).initCommand(input, io),
})

const lease = defineCommand({
  name: 'lease',
  summary: "take (or renew) a task's lease: ready → in-progress, a new run",
  description: 'Prints {taskId, agent, status, runId, lease, heartbeatExpiresAt, renewed} as JSON.',
  args: [TASK_ID],
  flags: {
    ...STORE_FLAGS,
    agent: AGENT,
    'ttl-ms': TTL('lease length', 600_000),
    'heartbeat-ttl-ms': TTL('heartbeat TTL', 300_000),
  },
  run: async (input, io) => (await import('../aof.ts')).leaseCommand(input, io),
})

const heartbeat = defineCommand({
  name: 'heartbeat',
  summary: "refresh the run's heartbeat (and extend the lease)",
  args: [TASK_ID],
  flags: { ...STORE_FLAGS, agent: AGENT, 'ttl-ms': TTL('heartbeat TTL', 300_000) },
  run: async (input, io) => (await import('../aof.ts')).heartbeatCommand(input, io),
})

const send = defineCommand({
  name: 'send',
  summary: 'route one AOF/1 message; prints {"outcome", …} and exits 0 whatever the outcome',
  description:
    'Reads one message (JSON, `AOF/1 {…}` or plain text) from FILE, or from stdin when FILE is - or absent. On NATS the ' +
    'message is also recorded on the stream (<p>.msg.<type>); the same message sent again within 2 minutes is not ' +
    'routed twice ({"outcome":"ignored","reason":"duplicate"}). With --no-route (NATS only) the message is checked and ' +
    'recorded but not routed: a router service (tea aof route) routes it; prints {"outcome":"queued","messageId",…}.',
  args: [{ name: 'file', value: 'FILE|-', description: 'the message file (default: stdin)', optional: true }],
  flags: {
    ...STORE_FLAGS,
    'no-route': { type: 'boolean', description: 'record the message for a router service instead of routing it here (NATS)' },
  },
  run: async (input, io) => (await import('../aof.ts')).sendCommand(input, io),
})

const route = defineCommand({
  name: 'route',
  summary: 'a router service on NATS: route every queued message (tea aof send --no-route), once each, until stopped',
  description:
    'Reads the durable consumer <p>_router on the stream <p>_events (<p>.msg.>), shared by every router of the project: ' +
    'each message goes to one router, is routed as tea aof send routes it, and is acked once its effect is committed. ' +
    'A message not acked within the ack wait (its router died) goes to another router; one that keeps failing is ' +
    'given up on at its last delivery and logged (protocol.message.failed). Messages their sender routed itself are ' +
    'acked untouched. The last router started sets the ack wait and max deliver for all.',
  flags: {
    ...NATS_FLAGS,
    once: { type: 'boolean', description: 'route what is queued, then exit (exit 1 when a message was given up on)' },
    'ack-wait-ms': { type: 'ms', default: 30_000, min: 100, description: "how long a message may stay in one router's hands" },
    'max-deliver': { type: 'int', default: 5, min: 1, description: 'how many times a message is handed out in all' },
  },
  notes:
    'Output: one JSON line per message on stdout {"seq","messageId","delivery","outcome","reason"?,"taskId","type",…}; ' +
    'progress on stderr. SIGINT/SIGTERM finish the message in hand, then exit 0.',
  run: async (input, io) => (await import('../aof-route.ts')).routeCommand(input, io),
})

const sessionEnd = defineCommand({
  name: 'session-end',
  summary: 'apply the run results of in-progress tasks',
  flags: STORE_FLAGS,
  run: async (input, io) => (await import('../aof.ts')).sessionEndCommand(input, io),
})

const poll = defineCommand({
  name: 'poll',
  summary: 'recover tasks whose heartbeat is stale; prints the actions as JSON',
  flags: {
    'data-dir': DATA_DIR,
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
    ...STORE_FLAGS,
    task: { type: 'string', value: 'TASK-ID', description: "only this task's events" },
    type: { type: 'string', value: 'TYPE', description: 'only events of this type, e.g. task.transitioned' },
  },
  run: async (input, io) => (await import('../aof.ts')).eventsCommand(input, io),
})

const lint = defineCommand({
  name: 'lint',
  summary: 'check every task file (or NATS entry); exit 0 when clean, 1 with every problem and its path',
  flags: { ...STORE_FLAGS, json: { type: 'boolean', description: 'print the problems as a JSON array' } },
  run: async (input, io) => (await import('../aof.ts')).lintCommand(input, io),
})

const exportCmd = defineCommand({
  name: 'export',
  summary: 'copy a project from NATS into the data dir: tasks, run files, companion files, events',
  description:
    'Idempotent: a task with the same updatedAt is left alone, a newer one in the data dir is kept (and named on ' +
    'stderr), files are written only when they differ, events already there (by id) are skipped. Prints the counts ' +
    'as JSON; exit 1 when an entry could not be read (named on stderr, not copied).',
  flags: STORE_FLAGS,
  run: async (input, io) => (await import('../aof.ts')).copyCommand('export', input, io),
})

const importCmd = defineCommand({
  name: 'import',
  summary: 'copy a project from the data dir onto NATS: tasks, run files, companion files, events',
  description: 'The reverse of export, with the same rules.',
  flags: STORE_FLAGS,
  run: async (input, io) => (await import('../aof.ts')).copyCommand('import', input, io),
})

export const aof = defineCommand({
  name: 'aof',
  summary: 'the AOF/1 task protocol: tasks, messages, leases, scheduler, on the data dir or NATS (docs/aof.md, docs/fleet.md)',
  notes: 'Exit codes: 0 ok, 1 a failure (a refused transition, lint problems, a missing task), 2 bad usage.',
  subcommands: [init, task, lease, heartbeat, send, route, sessionEnd, poll, events, lint, exportCmd, importCmd],
})
