/**
 * The CLI's one entry: argv → the command it names → its input, parsed and coerced from its definition → its
 * `run` → an exit code. Whatever a command throws ends here and is printed once, on stderr:
 *
 *   tea aof lease: --ttl-ms expects a whole number of milliseconds from 1 to 2592000000 (30d), got "1e99"
 *   hint: 'tea aof lease --help' shows its usage
 *   tea resume: RUN_NOT_FOUND: no run nope in /tmp/data
 *
 * (the code is left out for usage errors, whose message says it all), with the exit code of the code's kind
 * (`exitKind` in core/errors.ts: 2 usage, 1 failure). Anything that is not a TeaError is a bug and is printed
 * with its stack, except Node's system errors (ENOSPC, EACCES …), which are the machine's doing, not tea's.
 */

import { endCommand } from '../core/command-end.ts'
import { errorMessage, exitKind, isTeaError } from '../core/errors.ts'
import { parseArgv } from './argv.ts'
import { type Command, resolveCommand, unknownCommand } from './command.ts'
import { tea } from './commands/index.ts'
import { EXIT } from './exit.ts'
import { renderHelp } from './help.ts'
import { type Io, processIo } from './io.ts'

export function main(argv: string[], io: Io = processIo()): Promise<number> {
  return runMain(tea, argv, io)
}

export async function runMain(root: Command, argv: readonly string[], io: Io): Promise<number> {
  const { path, rest } = resolveCommand(root, argv)
  const label = path.map((c) => c.name).join(' ')
  try {
    const command = path[path.length - 1]!
    const word = rest[0]
    // A command with subcommands and no arguments of its own: a word that names none is a misspelt command.
    if (command.subcommands?.length && !command.args?.length && word !== undefined && !word.startsWith('-'))
      throw unknownCommand(path, word)
    const parsed = parseArgv(command, rest)
    if (parsed.help) {
      io.out(renderHelp(path))
      return EXIT.ok
    }
    if (!command.run) {
      io.out(renderHelp(path))
      return EXIT.usage
    }
    return await command.run(parsed.input, io)
  } catch (e) {
    return report(e, label, io)
  } finally {
    // What the command's runs started to last beyond one of them (MCP servers) lasts as long as the command.
    await endCommand()
  }
}

function report(e: unknown, label: string, io: Io): number {
  if (isTeaError(e)) {
    const hint = e.hint ?? (e.code === 'USAGE' ? `'${label} --help' shows its usage` : undefined)
    io.err(`${label}: ${e.code === 'USAGE' ? '' : `${e.code}: `}${errorMessage(e)}\n${hint ? `hint: ${hint}\n` : ''}`)
    return exitKind(e.code) === 'usage' ? EXIT.usage : EXIT.failed
  }
  const code = (e as { code?: unknown } | null)?.code
  // A full disk met outside the store (serve's lock file, a trace, --output) is the same condition as inside it.
  if (code === 'ENOSPC' || code === 'EDQUOT')
    io.err(`${label}: STORE_FULL: ${e instanceof Error ? e.message : String(e)}\nhint: free space on that disk\n`)
  else if (e instanceof Error && typeof code === 'string' && /^E[A-Z]+$/.test(code)) io.err(`${label}: ${e.message}\n`)
  else io.err(`${label}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  return EXIT.failed
}
