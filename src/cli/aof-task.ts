/** `tea aof task create|list|show|move`. */

import { formatIssue } from '../core/issues.ts'
import { readFileSync } from 'node:fs'
import { TASK_STATUSES, type TaskStatus, createTask, getTask, isTaskStatus, listTasks, transitionTask } from '../aof/index.ts'
import { parseArgs, usage } from './args.ts'
import { AOF_EXIT, DATA_DIR_FLAG, contextOf, guarded, json, printHelp, requireString, requireTaskId } from './aof-common.ts'
import type { Command } from './io.ts'

const CREATE_HELP = `Usage: tea aof task create --title T [--body TEXT] [--agent A] [--status backlog|ready] [--parent ID]
                            [--meta key=value]... [--data-dir DIR]
Creates a task and prints its id. --meta values are JSON when they parse as JSON (true, 3, null), else strings.
`
const LIST_HELP = `Usage: tea aof task list [--status S] [--json] [--data-dir DIR]\n`
const SHOW_HELP = `Usage: tea aof task show ID [--json] [--data-dir DIR]\n`
const MOVE_HELP = `Usage: tea aof task move ID STATUS [--reason R] [--data-dir DIR]
Refuses a transition the AOF table does not allow (exit 1).
`
const TASK_HELP = `Usage: tea aof task <create|list|show|move> … (each takes --help)\n`

export const aofTaskCommand: Command = async (argv, io) => {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.out(TASK_HELP)
    return sub === undefined ? AOF_EXIT.usage : AOF_EXIT.ok
  }
  const command = `aof task ${sub}`
  return guarded(command, io, async () => {
    switch (sub) {
      case 'create':
        return create(command, rest, io)
      case 'list':
        return list(command, rest, io)
      case 'show':
        return show(command, rest, io)
      case 'move':
        return move(command, rest, io)
      default:
        throw usage('aof task', `unknown subcommand '${sub}' (expected create, list, show or move)`)
    }
  })
}

async function create(command: string, argv: string[], io: Parameters<Command>[1]): Promise<number> {
  const { flags } = parseArgs(argv, {
    ...DATA_DIR_FLAG,
    title: { type: 'string' },
    body: { type: 'string' },
    'body-file': { type: 'string' },
    agent: { type: 'string' },
    status: { type: 'string' },
    parent: { type: 'string' },
    meta: { type: 'string', multiple: true },
  }, command)
  if (flags.help) return printHelp(io, CREATE_HELP)
  const title = requireString(command, 'title', flags.title)
  const status = flags.status ?? 'backlog'
  if (status !== 'backlog' && status !== 'ready') throw usage(command, `--status must be backlog or ready, received ${JSON.stringify(status)}`)
  const metadata: Record<string, unknown> = {}
  for (const kv of flags.meta ?? []) {
    const eq = kv.indexOf('=')
    if (eq <= 0) throw usage(command, `--meta expects key=value, received ${JSON.stringify(kv)}`)
    metadata[kv.slice(0, eq)] = metaValue(kv.slice(eq + 1))
  }
  if (flags.parent !== undefined) requireTaskId(command, flags.parent)
  const body = flags['body-file'] !== undefined ? readFileSync(flags['body-file'], 'utf8') : flags.body
  const task = await createTask(contextOf(flags['data-dir'], io), {
    title,
    status,
    metadata,
    createdBy: 'cli',
    ...(body !== undefined ? { body } : {}),
    ...(flags.agent ? { agent: flags.agent } : {}),
    ...(flags.parent ? { parentId: flags.parent } : {}),
  })
  io.out(`${task.id}\n`)
  return AOF_EXIT.ok
}

function metaValue(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

async function list(command: string, argv: string[], io: Parameters<Command>[1]): Promise<number> {
  const { flags } = parseArgs(argv, { ...DATA_DIR_FLAG, status: { type: 'string' }, json: { type: 'boolean' } }, command)
  if (flags.help) return printHelp(io, LIST_HELP)
  if (flags.status !== undefined && !isTaskStatus(flags.status)) {
    throw usage(command, `--status must be one of ${TASK_STATUSES.join(', ')}, received ${JSON.stringify(flags.status)}`)
  }
  const statuses: readonly TaskStatus[] = flags.status ? [flags.status as TaskStatus] : TASK_STATUSES
  const { tasks, problems } = listTasks(contextOf(flags['data-dir'], io), statuses)
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
  return AOF_EXIT.ok
}

async function show(command: string, argv: string[], io: Parameters<Command>[1]): Promise<number> {
  const { flags, positionals } = parseArgs(argv, { ...DATA_DIR_FLAG, json: { type: 'boolean' } }, command)
  if (flags.help) return printHelp(io, SHOW_HELP)
  const id = requireTaskId(command, positionals[0])
  const task = await getTask(contextOf(flags['data-dir'], io), id)
  if (!task) {
    io.err(`tea ${command}: task ${id} not found\n`)
    return AOF_EXIT.failed
  }
  if (flags.json) io.out(json({ id: task.id, status: task.status, path: task.path, frontmatter: task.data, body: task.body }))
  else io.out(readFileSync(task.path, 'utf8'))
  return AOF_EXIT.ok
}

async function move(command: string, argv: string[], io: Parameters<Command>[1]): Promise<number> {
  const { flags, positionals } = parseArgs(argv, { ...DATA_DIR_FLAG, reason: { type: 'string' } }, command)
  if (flags.help) return printHelp(io, MOVE_HELP)
  const id = requireTaskId(command, positionals[0])
  const to = positionals[1]
  if (!isTaskStatus(to)) throw usage(command, `expected a target status (${TASK_STATUSES.join(', ')}), received ${JSON.stringify(to)}`)
  const ctx = contextOf(flags['data-dir'], io)
  const before = await getTask(ctx, id)
  const after = await transitionTask(ctx, id, to, { actor: 'cli', ...(flags.reason ? { reason: flags.reason } : {}) })
  io.out(`${id}: ${before?.status ?? '?'} -> ${after.status}\n`)
  return AOF_EXIT.ok
}
