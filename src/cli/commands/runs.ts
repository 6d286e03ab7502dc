/** `tea runs` and `tea runs prune` (../runs.ts, loaded on use). */

import { defineCommand } from '../command.ts'
import { DATA_DIR } from './flags.ts'

const prune = defineCommand({
  name: 'prune',
  summary: 'delete finished runs with their checkpoints and plan records',
  description: `Finished means completed, failed, cancelled or interrupted; runs marked running are never pruned, and
memory.* entries are not touched. Give --keep, --older-than, or both (a run must then qualify under both).
The deleted ids are printed on stdout, one per line.`,
  flags: {
    'data-dir': DATA_DIR,
    keep: { type: 'int', description: 'keep the newest N runs (of every status) and delete the finished ones before them' },
    'older-than': {
      type: 'duration',
      description: 'delete only runs last updated longer ago than this: 30m, 12h, 7d (a bare number is seconds)',
    },
  },
  run: async (input, io) => (await import('../runs.ts')).pruneCommand(input, io),
})

export const runs = defineCommand({
  name: 'runs',
  summary: 'list the runs in the data dir (or prune old ones)',
  description: 'Oldest first: id, status, agent, last node, step count and last update.',
  flags: { 'data-dir': DATA_DIR, json: { type: 'boolean', description: 'print the run records as a JSON array' } },
  subcommands: [prune],
  run: async (input, io) => (await import('../runs.ts')).listCommand(input, io),
})
