/**
 * `tea aof …` (SPEC §3.9): the AOF/1 task protocol from the command line. Every subcommand takes `--data-dir DIR`
 * (default `$TEA_DATA_DIR`, else `./.tea`) and `--help`. Exit codes: 0 ok, 1 failure (including lint problems and
 * refused transitions), 2 bad usage. `send` exits 0 whatever the outcome: the outcome is the answer.
 */

import { formatIssue } from '../core/issues.ts'
import { readFileSync } from 'node:fs'
import {
  acquireLease,
  handleSessionEnd,
  heartbeat,
  initDataDir,
  lintDataDir,
  poll,
  readEvents,
  routeMessage,
} from '../aof/index.ts'
import { parseArgs, usage } from './args.ts'
import { aofTaskCommand } from './aof-task.ts'
import {
  AOF_EXIT,
  DATA_DIR_FLAG,
  contextOf,
  dataDirOf,
  guarded,
  json,
  parseMs,
  parseNow,
  printHelp,
  requireString,
  requireTaskId,
} from './aof-common.ts'
import type { Command, Io } from './io.ts'

const HELP = `Usage: tea aof <command> [options]   (all commands take --data-dir DIR; default $TEA_DATA_DIR or ./.tea)

Commands:
  init                                   create the folder layout
  task create|list|show|move             manage tasks (tea aof task <cmd> --help)
  lease ID --agent A [--ttl-ms N] [--heartbeat-ttl-ms N]
                                         take (or renew) a task's lease; ready -> in-progress, new run
  heartbeat ID --agent A [--ttl-ms N]    refresh the run's heartbeat
  send [FILE|-]                          route one AOF/1 message; prints {"outcome",…}, exits 0
  session-end                            apply run results of in-progress tasks
  poll [--dry-run] [--now ISO] [--heartbeat-ttl-ms N]
                                         recover tasks with stale heartbeats; prints the actions as JSON
  events [--task ID] [--type T]          the event log as NDJSON
  lint [--json]                          exit 0 when clean, 1 with every problem and its path
`

const SUB_HELP: Record<string, string> = {
  init: 'Usage: tea aof init [--data-dir DIR]\n',
  lease: 'Usage: tea aof lease ID --agent A [--ttl-ms N] [--heartbeat-ttl-ms N] [--data-dir DIR]\n',
  heartbeat: 'Usage: tea aof heartbeat ID --agent A [--ttl-ms N] [--data-dir DIR]\n',
  send: 'Usage: tea aof send [FILE|-] [--data-dir DIR]\nReads one message (JSON, `AOF/1 {…}` or text) from FILE or stdin.\n',
  'session-end': 'Usage: tea aof session-end [--data-dir DIR]\n',
  poll: 'Usage: tea aof poll [--dry-run] [--now ISO] [--heartbeat-ttl-ms N] [--data-dir DIR]\n',
  events: 'Usage: tea aof events [--task ID] [--type T] [--data-dir DIR]\n',
  lint: 'Usage: tea aof lint [--json] [--data-dir DIR]\n',
}

export const aofCommand: Command = async (argv, io) => {
  const [sub, ...rest] = argv
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.out(HELP)
    return sub === undefined ? AOF_EXIT.usage : AOF_EXIT.ok
  }
  if (sub === 'task') return aofTaskCommand(rest, io)
  const run = SUBCOMMANDS[sub]
  if (!run) {
    io.err(`tea aof: unknown command '${sub}'\n\n${HELP}`)
    return AOF_EXIT.usage
  }
  return guarded(`aof ${sub}`, io, () => run(`aof ${sub}`, rest, io))
}

type Sub = (command: string, argv: string[], io: Io) => Promise<number>

const SUBCOMMANDS: Record<string, Sub> = {
  async init(command, argv, io) {
    const { flags } = parseArgs(argv, DATA_DIR_FLAG, command)
    if (flags.help) return printHelp(io, SUB_HELP.init!)
    initDataDir(contextOf(flags['data-dir'], io))
    io.out(`initialized ${dataDirOf(flags['data-dir'], io)}\n`)
    return AOF_EXIT.ok
  },

  async lease(command, argv, io) {
    const { flags, positionals } = parseArgs(argv, { ...DATA_DIR_FLAG, agent: { type: 'string' }, 'ttl-ms': { type: 'string' }, 'heartbeat-ttl-ms': { type: 'string' } }, command)
    if (flags.help) return printHelp(io, SUB_HELP.lease!)
    const id = requireTaskId(command, positionals[0])
    const agent = requireString(command, 'agent', flags.agent)
    const ttlMs = parseMs(command, 'ttl-ms', flags['ttl-ms'])
    const heartbeatTtlMs = parseMs(command, 'heartbeat-ttl-ms', flags['heartbeat-ttl-ms'])
    const r = await acquireLease(contextOf(flags['data-dir'], io), id, agent, {
      ...(ttlMs ? { ttlMs } : {}),
      ...(heartbeatTtlMs ? { heartbeatTtlMs } : {}),
    })
    io.out(json({ taskId: id, agent, status: r.task.status, runId: r.run.runId, lease: r.task.data.lease, heartbeatExpiresAt: r.heartbeat.expiresAt, renewed: r.renewed }))
    return AOF_EXIT.ok
  },

  async heartbeat(command, argv, io) {
    const { flags, positionals } = parseArgs(argv, { ...DATA_DIR_FLAG, agent: { type: 'string' }, 'ttl-ms': { type: 'string' } }, command)
    if (flags.help) return printHelp(io, SUB_HELP.heartbeat!)
    const id = requireTaskId(command, positionals[0])
    const ttlMs = parseMs(command, 'ttl-ms', flags['ttl-ms'])
    const hb = await heartbeat(contextOf(flags['data-dir'], io), id, requireString(command, 'agent', flags.agent), ttlMs ? { ttlMs } : {})
    io.out(json(hb))
    return AOF_EXIT.ok
  },

  async send(command, argv, io) {
    const { flags, positionals } = parseArgs(argv, DATA_DIR_FLAG, command)
    if (flags.help) return printHelp(io, SUB_HELP.send!)
    if (positionals.length > 1) throw usage(command, `expected at most one FILE, received ${positionals.length}`)
    const file = positionals[0] ?? '-'
    let text: string
    try {
      text = file === '-' ? await io.readStdin() : readFileSync(file, 'utf8')
    } catch (e) {
      throw usage(command, `cannot read ${file}: ${(e as Error).message}`)
    }
    const outcome = await routeMessage(contextOf(flags['data-dir'], io), text)
    io.out(`${JSON.stringify(outcome)}\n`)
    return AOF_EXIT.ok
  },

  async 'session-end'(command, argv, io) {
    const { flags } = parseArgs(argv, DATA_DIR_FLAG, command)
    if (flags.help) return printHelp(io, SUB_HELP['session-end']!)
    io.out(json(await handleSessionEnd(contextOf(flags['data-dir'], io))))
    return AOF_EXIT.ok
  },

  async poll(command, argv, io) {
    const { flags } = parseArgs(argv, { ...DATA_DIR_FLAG, 'dry-run': { type: 'boolean' }, now: { type: 'string' }, 'heartbeat-ttl-ms': { type: 'string' } }, command)
    if (flags.help) return printHelp(io, SUB_HELP.poll!)
    const now = parseNow(command, flags.now)
    const ttl = parseMs(command, 'heartbeat-ttl-ms', flags['heartbeat-ttl-ms'])
    const result = await poll(contextOf(flags['data-dir'], io, now), { dryRun: flags['dry-run'] ?? false, ...(ttl ? { heartbeatTtlMs: ttl } : {}) })
    io.out(json(result))
    return AOF_EXIT.ok
  },

  async events(command, argv, io) {
    const { flags } = parseArgs(argv, { ...DATA_DIR_FLAG, task: { type: 'string' }, type: { type: 'string' } }, command)
    if (flags.help) return printHelp(io, SUB_HELP.events!)
    if (flags.task !== undefined) requireTaskId(command, flags.task)
    const events = readEvents(contextOf(flags['data-dir'], io), {
      ...(flags.task ? { taskId: flags.task } : {}),
      ...(flags.type ? { type: flags.type } : {}),
    })
    io.out(events.map((e) => `${JSON.stringify(e)}\n`).join(''))
    return AOF_EXIT.ok
  },

  async lint(command, argv, io) {
    const { flags } = parseArgs(argv, { ...DATA_DIR_FLAG, json: { type: 'boolean' } }, command)
    if (flags.help) return printHelp(io, SUB_HELP.lint!)
    const problems = lintDataDir(contextOf(flags['data-dir'], io))
    if (flags.json) io.out(json(problems))
    else if (problems.length === 0) io.out('OK: no problems\n')
    else for (const p of problems) io.out(`${formatIssue(p)}\n`)
    return problems.length === 0 ? AOF_EXIT.ok : AOF_EXIT.failed
  },
}
