import { TeaError } from '../core/errors.ts'
import { parseDuration } from '../core/util.ts'
import { pruneRuns, runsByCreation } from '../store/prune-runs.ts'
import { parseArgs, type FlagSpecs } from './args.ts'
import { EXIT } from './exit.ts'
import type { Command } from './io.ts'
import { dataDirOf, openStore } from './run-output.ts'

const LIST_FLAGS = { 'data-dir': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } satisfies FlagSpecs
const PRUNE_FLAGS = {
  'data-dir': { type: 'string' },
  keep: { type: 'string' },
  'older-than': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} satisfies FlagSpecs

export const RUNS_HELP = `Usage: tea runs [--data-dir DIR] [--json]
       tea runs prune [--data-dir DIR] [--keep N] [--older-than DURATION]

Lists the runs in the data dir, oldest first: id, status, agent, current node, step, last update.
'prune' deletes finished runs (completed, failed, cancelled, interrupted) with their checkpoints: all but the
newest N with --keep, those not updated for DURATION (e.g. 30m, 12h, 7d) with --older-than, or both.
Runs still marked running are never pruned.
`

export const runsCommand: Command = async (argv, io) => {
  if (argv[0] === 'prune') return prune(argv.slice(1), io)
  const { flags, positionals } = parseArgs(argv, LIST_FLAGS, 'runs')
  if (flags.help) {
    io.out(RUNS_HELP)
    return EXIT.ok
  }
  if (positionals.length) throw new TeaError('USAGE', `runs: unexpected argument '${positionals[0]}'`, { hint: 'tea runs [prune]' })
  const store = await openStore(dataDirOf(flags['data-dir'], io))
  try {
    const runs = await runsByCreation(store)
    if (flags.json) {
      io.out(`${JSON.stringify(runs, null, 2)}\n`)
      return EXIT.ok
    }
    if (!runs.length) {
      io.err('no runs yet\n')
      return EXIT.ok
    }
    const rows = runs.map((r) => [r.id, r.status, r.agent, r.node ?? '-', String(r.step), new Date(r.updatedAt).toISOString().replace(/\.\d+Z$/, 'Z')])
    io.out(table([['RUN', 'STATUS', 'AGENT', 'NODE', 'STEP', 'UPDATED'], ...rows]))
    return EXIT.ok
  } finally {
    await store.close()
  }
}

async function prune(argv: string[], io: Parameters<Command>[1]): Promise<number> {
  const { flags } = parseArgs(argv, PRUNE_FLAGS, 'runs prune')
  if (flags.help) {
    io.out(RUNS_HELP)
    return EXIT.ok
  }
  const keep = flags.keep === undefined ? undefined : Number(flags.keep)
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) throw new TeaError('USAGE', `runs prune: --keep expects a whole number ≥ 0, got '${flags.keep}'`)
  const olderThanMs = flags['older-than'] === undefined ? undefined : parseDuration(flags['older-than'])
  if (flags['older-than'] !== undefined && olderThanMs === undefined) throw new TeaError('USAGE', `runs prune: --older-than expects a duration such as 30m, 12h or 7d, got '${flags['older-than']}'`)
  if (keep === undefined && olderThanMs === undefined) throw new TeaError('USAGE', 'runs prune: give --keep N, --older-than DURATION, or both')
  const store = await openStore(dataDirOf(flags['data-dir'], io))
  try {
    const deleted = await pruneRuns(store, { ...(keep !== undefined && { keep }), ...(olderThanMs !== undefined && { olderThanMs }) })
    io.err(`pruned ${deleted.length} run${deleted.length === 1 ? '' : 's'}\n`)
    for (const id of deleted) io.out(`${id}\n`)
    return EXIT.ok
  } finally {
    await store.close()
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n') + '\n'
}
