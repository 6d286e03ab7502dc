import { errorMessage, exitKind, isTeaError } from '../core/errors.ts'
import { buildInfo } from '../core/build-info.ts'
import { EXIT } from './exit.ts'
import type { Command, Io } from './io.ts'
import { processIo } from './io.ts'

const HELP = `tea — run YAML agents against a local model server

Usage: tea <command> [options]

Commands:
  run <agent.yaml>        run an agent; final state as JSON on stdout, progress on stderr
  resume <run-id>         continue a failed, paused, stopped or killed run from its last checkpoint
  runs [prune]            list runs (or delete old ones) in the data dir
  validate <agent.yaml>   check an agent; every problem as file:line:col: CODE message
  graph <agent.yaml>      print the agent's graph (--format mermaid|dot)
  actions [--json]        list the actions of this build, with JSON Schemas
  version                 version, target and enabled features
  aof <subcommand>        AOF/1 filesystem task protocol: tasks, messages, leases, scheduler (docs/aof.md)
  worker                  run an agent on the AOF tasks routed to --agent-id (docs/aof.md, Workers)

Run 'tea <command> --help' for a command's options.
`

/** Errors that mean the command line or the agent file is wrong (exit 2), not that a run failed. */

const versionCommand: Command = async (_argv, io) => {
  const v = buildInfo()
  io.out(`tea ${v.version} (${v.target}; features: ${v.features.join(', ') || 'none'}; node ${v.node})\n`)
  return EXIT.ok
}

/**
 * Commands load on demand: `tea --version` or `tea runs` should not pay for initialising the engine, the model
 * clients or the planning code (cold start is a quality bar, SPEC §4).
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./run.ts')).runCommand,
  resume: async () => (await import('./resume.ts')).resumeCommand,
  runs: async () => (await import('./runs.ts')).runsCommand,
  validate: async () => (await import('./inspect.ts')).validateCommand,
  graph: async () => (await import('./inspect.ts')).graphCommand,
  actions: async () => (await import('./inspect.ts')).actionsCommand,
  version: async () => versionCommand,
  aof: async () => (await import('./aof.ts')).aofCommand,
  worker: async () => (await import('./worker.ts')).workerCommand,
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP)
    return name === undefined ? EXIT.usage : EXIT.ok
  }
  if (name === '--version' || name === '-V') return versionCommand(rest, io)
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  if (!load) {
    io.err(`tea: unknown command '${name}'\n\n${HELP}`)
    return EXIT.usage
  }
  try {
    return await (await load())(rest, io)
  } catch (e) {
    if (isTeaError(e)) {
      // Usage messages already name their command ("run: unknown option --x").
      const head = e.code === 'USAGE' ? 'tea: ' : `tea ${name}: ${e.code}: `
      io.err(`${head}${errorMessage(e)}\n${e.hint ? `hint: ${e.hint}\n` : ''}`)
      return exitKind(e.code) === 'usage' ? EXIT.usage : EXIT.failed
    }
    throw e
  }
}
