/** What `tea aof task create|list|show|move` does (definitions, flags and help: commands/aof-task.ts). */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { formatIssue } from '../core/issues.ts'
import { jsonOrText } from '../core/json.ts'
import { TASK_STATUSES, type TaskStatus, isTaskStatus, readTaskText } from '../aof/index.ts'
import { renderTask } from '../aof/protocol/task-file.ts'
import { json, requireTaskId } from './aof-common.ts'
import { type StoreFlags, withStore } from './aof-store.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { isReservedKey, RESERVED_KEYS } from './reserved-keys.ts'

interface CreateFlags extends StoreFlags {
  title: string
  body?: string
  'body-file'?: string
  agent?: string
  status: 'backlog' | 'ready'
  parent?: string
  meta: string[]
}

export async function createCommand({ flags }: { flags: CreateFlags }, io: Io): Promise<number> {
  const metadata = metaOf(flags.meta)
  if (flags.parent !== undefined) requireTaskId(flags.parent, '--parent to be a task id')
  if (flags.body !== undefined && flags['body-file'] !== undefined) throw new TeaError('USAGE', 'give --body or --body-file, not both')
  const body = flags['body-file'] !== undefined ? readBody(flags['body-file'], io) : flags.body
  const task = await withStore(flags, io, (store) =>
    store.create({
      title: flags.title,
      status: flags.status,
      metadata,
      createdBy: 'cli',
      ...(body !== undefined ? { body } : {}),
      ...(flags.agent ? { agent: flags.agent } : {}),
      ...(flags.parent ? { parentId: flags.parent } : {}),
    }),
  )
  io.out(`${task.id}\n`)
  return EXIT.ok
}

/**
 * `--meta key=value`… as an object with no prototype, so every key the user gives is an own entry. The value is
 * JSON when it parses as JSON (`true`, `3`, `null`, `{"a":1}`), else the text itself.
 */
function metaOf(entries: readonly string[]): Record<string, unknown> {
  const metadata: Record<string, unknown> = Object.create(null)
  for (const kv of entries) {
    const eq = kv.indexOf('=')
    if (eq <= 0) throw new TeaError('USAGE', `--meta expects key=value, got ${JSON.stringify(kv)}`)
    const key = kv.slice(0, eq)
    if (isReservedKey(key))
      throw new TeaError(
        'USAGE',
        `--meta key ${JSON.stringify(key)} is reserved (${RESERVED_KEYS.join(', ')} cannot be keys); use another name`,
      )
    metadata[key] = jsonOrText(kv.slice(eq + 1), `--meta ${key}`)
  }
  return metadata
}

function readBody(file: string, io: Io): string {
  try {
    return readFileSync(resolve(io.cwd, file), 'utf8')
  } catch (e) {
    throw new TeaError('USAGE', `cannot read --body-file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
  }
}

export async function listCommand({ flags }: { flags: StoreFlags & { status?: TaskStatus; json: boolean } }, io: Io): Promise<number> {
  const statuses: readonly TaskStatus[] = flags.status ? [flags.status] : TASK_STATUSES
  const { tasks, problems } = await withStore(flags, io, (store) => store.list(statuses))
  for (const p of problems) io.err(`warning: skipped ${formatIssue(p)}\n`)
  const rows = tasks.map((t) => ({
    id: t.id,
    status: t.status,
    title: t.data.title,
    agent: (t.data.routing as { agent?: string } | undefined)?.agent ?? null,
    updatedAt: t.data.updatedAt,
  }))
  if (flags.json) io.out(json(rows))
  else for (const r of rows) io.out(`${r.id}  ${r.status.padEnd(11)}  ${r.title}${r.agent ? `  (@${r.agent})` : ''}\n`)
  return EXIT.ok
}

export async function showCommand(
  { args, flags }: { args: { id: string }; flags: StoreFlags & { json: boolean } },
  io: Io,
): Promise<number> {
  const id = requireTaskId(args.id)
  const [task, kind] = await withStore(flags, io, async (store) => [await store.get(id), store.kind] as const)
  if (!task)
    throw new TeaError('AOF_NOT_FOUND', `task ${id} not found`, {
      hint: "'tea aof task list' lists the tasks; pass --data-dir if they live elsewhere",
    })
  if (flags.json) io.out(json({ id: task.id, status: task.status, path: task.path, frontmatter: task.data, body: task.body }))
  // Through the AOF reader: a file swapped for a FIFO since the listing is refused, never waited on. A task on
  // NATS has no file: its entry holds the same text.
  else io.out(kind === 'nats' ? renderTask(task) : readTaskText(task.path))
  return EXIT.ok
}

export async function moveCommand(
  { args, flags }: { args: { id: string; status: string }; flags: StoreFlags & { reason?: string } },
  io: Io,
): Promise<number> {
  const id = requireTaskId(args.id)
  const to = args.status
  if (!isTaskStatus(to)) throw new TeaError('USAGE', `expected a target status (${TASK_STATUSES.join(', ')}), got ${JSON.stringify(to)}`)
  const [before, after] = await withStore(flags, io, async (store) => [
    await store.get(id),
    await store.transition(id, to, { actor: 'cli', ...(flags.reason ? { reason: flags.reason } : {}) }),
  ])
  io.out(`${id}: ${before?.status ?? '?'} -> ${after.status}\n`)
  return EXIT.ok
}
