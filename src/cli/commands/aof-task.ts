/** `tea aof task create|list|show|move` (../aof-task.ts, loaded on use). */

import { TASK_STATUSES } from '../../aof/protocol/status.ts'
import { defineCommand } from '../command.ts'
import { STORE_FLAGS, TASK_ID } from './flags.ts'

const create = defineCommand({
  name: 'create',
  summary: 'create a task and print its id',
  flags: {
    ...STORE_FLAGS,
    title: { type: 'string', value: 'T', required: true, description: 'the title' },
    body: { type: 'string', value: 'TEXT', description: 'the body (Markdown)' },
    'body-file': { type: 'string', value: 'FILE', description: 'read the body from FILE (instead of --body)' },
    agent: { type: 'string', value: 'A', description: 'route the task to this agent id' },
    status: { type: 'enum', values: ['backlog', 'ready'], default: 'backlog', description: 'the status it starts in' },
    parent: { type: 'string', value: 'TASK-ID', description: 'the parent task, which must exist' },
    meta: {
      type: 'list',
      value: 'key=value',
      description: 'a metadata entry; the value is JSON when it parses as JSON (true, 3, null), else a string',
    },
  },
  run: async (input, io) => (await import('../aof-task.ts')).createCommand(input, io),
})

const list = defineCommand({
  name: 'list',
  summary: 'list tasks: id, status, title and agent',
  flags: {
    ...STORE_FLAGS,
    status: { type: 'enum', values: TASK_STATUSES, description: 'only tasks in this status' },
    json: { type: 'boolean', description: 'print {id, status, title, agent, updatedAt} records as a JSON array' },
  },
  run: async (input, io) => (await import('../aof-task.ts')).listCommand(input, io),
})

const show = defineCommand({
  name: 'show',
  summary: 'print a task file',
  args: [TASK_ID],
  flags: {
    ...STORE_FLAGS,
    json: { type: 'boolean', description: 'print {id, status, path, frontmatter, body} as JSON' },
  },
  run: async (input, io) => (await import('../aof-task.ts')).showCommand(input, io),
})

const move = defineCommand({
  name: 'move',
  summary: 'move a task to another status; a transition the AOF table does not allow is refused (exit 1)',
  args: [TASK_ID, { name: 'status', value: 'STATUS', description: `the new status: ${TASK_STATUSES.join(', ')}` }],
  flags: {
    ...STORE_FLAGS,
    reason: { type: 'string', value: 'R', description: 'why, recorded in the event' },
  },
  run: async (input, io) => (await import('../aof-task.ts')).moveCommand(input, io),
})

export const task = defineCommand({
  name: 'task',
  summary: 'manage tasks: create, list, show, move',
  subcommands: [create, list, show, move],
})
