/**
 * The command tree: `tea` and every command under it, as definitions (../command.ts). This module and the ones it
 * imports hold no implementation, so `tea --version` and any `--help` load nothing else; each command's `run`
 * imports its body when it runs (cold start is a quality bar, SPEC §4).
 *
 * One layout for every command: its definition (name, args, flags, help) in `cli/commands/<group>.ts`, listed here;
 * its body, the function `run` imports, in `cli/<command>.ts` (`run.ts`, `serve.ts`, `aof-task.ts`); what only that
 * body needs, when it is more than one file, in the folder of the same name (`cli/serve/`, `cli/doctor/`).
 */

import { versionLine } from '../../core/build-info.ts'
import { enabledFeatures } from '../../feature-list.ts'
import { type Command, defineCommand, resolveCommand, unknownCommand } from '../command.ts'
import { EXIT } from '../exit.ts'
import { renderHelp } from '../help.ts'
import type { Io } from '../io.ts'
import { aof } from './aof.ts'
import { actions, graph, validate } from './inspect.ts'
import { mcp } from './mcp.ts'
import { resume, run } from './run.ts'
import { runs } from './runs.ts'
import { doctor, serve } from './serve.ts'
import { worker } from './worker.ts'

function printVersion(io: Io): number {
  io.out(`${versionLine(enabledFeatures())}\n`)
  return EXIT.ok
}

const version = defineCommand({
  name: 'version',
  summary: 'print the version, the build target and the enabled features',
  run: async (_input, io) => printVersion(io),
})

const help = defineCommand({
  name: 'help',
  summary: "print a command's help (the same as 'tea <command> --help')",
  args: [{ name: 'command', description: 'the command, e.g. run or aof task create', variadic: true }],
  run: async ({ args }, io) => {
    const { path, rest } = resolveCommand(tea, args.command)
    if (rest[0] !== undefined) throw unknownCommand(path, rest[0])
    io.out(renderHelp(path))
    return EXIT.ok
  },
})

export const tea: Command = defineCommand({
  name: 'tea',
  summary: 'run YAML agents against a local model server',
  flags: { version: { type: 'boolean', short: 'V', description: "print the version (the same as 'tea version')" } },
  subcommands: [run, resume, runs, validate, graph, actions, version, help, aof, worker, serve, mcp, doctor],
  run: async ({ flags }, io) => {
    if (flags.version) return printVersion(io)
    io.out(renderHelp([tea])) // no command: the help, as for a group without its subcommand (exit 2)
    return EXIT.usage
  },
})
