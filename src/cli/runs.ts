/** What `tea runs` and `tea runs prune` do (their definitions, flags and help are in commands/runs.ts). */

import { TeaError } from '../core/errors.ts'
import { pruneRuns, runsByCreation } from '../store/prune-runs.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { openStore } from './run-output.ts'
import { runJson } from './serve/run-json.ts'

export async function listCommand({ flags }: { flags: { 'data-dir'?: string; json: boolean } }, io: Io): Promise<number> {
  const store = await openStore(dataDirOf(flags['data-dir'], io))
  try {
    const runs = await runsByCreation(store)
    if (flags.json) {
      io.out(`${JSON.stringify(runs.map(runJson), null, 2)}\n`)
      return EXIT.ok
    }
    if (!runs.length) {
      io.err('no runs yet\n')
      return EXIT.ok
    }
    const rows = runs.map((r) => [
      r.id,
      r.status,
      r.agent,
      r.node ?? '-',
      String(r.step),
      new Date(r.updatedAt).toISOString().replace(/\.\d+Z$/, 'Z'),
      // Why a failed run failed, whole: last, so a long message does not widen the other columns.
      r.status === 'failed' && r.error ? `${r.error.code}: ${r.error.message}` : '',
    ])
    io.out(table([['RUN', 'STATUS', 'AGENT', 'NODE', 'STEP', 'UPDATED', 'ERROR'], ...rows]))
    return EXIT.ok
  } finally {
    await store.close()
  }
}

export async function pruneCommand(
  { flags }: { flags: { 'data-dir'?: string; keep?: number; 'older-than'?: number } },
  io: Io,
): Promise<number> {
  const keep = flags.keep
  const olderThanMs = flags['older-than']
  if (keep === undefined && olderThanMs === undefined) throw new TeaError('USAGE', 'give --keep N, --older-than DURATION, or both')
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
  return (
    rows
      .map((r) =>
        r
          .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  )
}
