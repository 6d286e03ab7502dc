/** `tea worker` (SPEC §3.10, docs/aof.md "Workers"): an agent as an AOF/1 worker (../worker.ts, loaded on use). */

import { defineCommand } from '../command.ts'
import { MAX_TIMER_MS } from '../flag-value.ts'
import { DATA_DIR, MODEL, NATS, NATS_CREDS, REPLAY } from './flags.ts'

export const worker = defineCommand({
  name: 'worker',
  summary: 'run an agent on the AOF tasks routed to --agent-id (docs/aof.md, Workers)',
  description: `Claims ready tasks routed to ID (oldest first), leases them, keeps the heartbeat fresh while the agent
runs, gives the agent the task as state.task {id, title, body, inputs, metadata} and state.agent_id, and reports
the outcome (state.outcome: done by default, blocked, needs_review, partial, failed → blocked) as a
completion.report. A restarted worker resumes its unfinished runs from their checkpoints. With --nats the tasks
are on a NATS JetStream server shared by many boards (docs/fleet.md); the agent's checkpoints stay in --data-dir.`,
  flags: {
    'agent-id': { type: 'string', value: 'ID', required: true, description: 'the agent id tasks are routed to and leases are taken in' },
    agent: { type: 'string', value: 'FILE', required: true, description: 'the agent file to run for each task' },
    'data-dir': DATA_DIR,
    nats: NATS,
    'nats-creds': NATS_CREDS,
    once: { type: 'boolean', description: 'process at most one task, then exit' },
    // A timer's delay itself: past Node's longest, the timer would fire at once and the worker poll without pause.
    'interval-ms': { type: 'ms', default: 2000, max: MAX_TIMER_MS, description: 'time between polls when idle' },
    'lease-ttl-ms': { type: 'ms', default: 600_000, description: 'lease length' },
    'heartbeat-ttl-ms': { type: 'ms', default: 300_000, description: 'heartbeat TTL, refreshed every third of it' },
    model: MODEL,
    replay: REPLAY,
    verbose: { type: 'boolean', short: 'v', description: 'a progress line per node' },
  },
  notes: `Output: one JSON line per task on stdout {"taskId","runId","outcome","status"}; progress on stderr.
Exit codes: 0 (--once: done, or nothing to do), 1 a report was refused or the worker failed, 2 bad usage or
invalid agent, 130 stopped by SIGINT/SIGTERM (the task stays in progress and is resumed by a restarted worker).`,
  run: async (input, io) => (await import('../worker.ts')).workerCommand(input, io),
})
