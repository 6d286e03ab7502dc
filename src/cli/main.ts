import { isTeaError } from '../core/errors.ts'
import { enabledFeatures } from '../features.ts'
import type { Command, Io } from './io.ts'
import { processIo } from './io.ts'

export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 3, signal: 130 } as const

const HELP = `tea — run YAML agents against a local model server

Usage: tea <command> [options]

Commands:
  run <agent.yaml>      run an agent; final state as JSON on stdout
  version               version, target and enabled features

Run 'tea <command> --help' for a command's options.
`

export function version(): { version: string; target: string; features: string[]; node: string } {
  return {
    version: typeof __TEA_VERSION__ === 'undefined' ? 'dev' : __TEA_VERSION__,
    target: typeof __TEA_TARGET__ === 'undefined' ? 'source' : __TEA_TARGET__,
    features: enabledFeatures(),
    node: process.version,
  }
}

const versionCommand: Command = async (_argv, io) => {
  const v = version()
  io.out(`tea ${v.version} (${v.target}; features: ${v.features.join(', ') || 'none'}; node ${v.node})\n`)
  return EXIT.ok
}

function commands(): Record<string, Command> {
  return {
    version: versionCommand,
  }
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP)
    return name === undefined ? EXIT.usage : EXIT.ok
  }
  if (name === '--version' || name === '-V') return versionCommand(rest, io)
  const command = commands()[name]
  if (!command) {
    io.err(`tea: unknown command '${name}'\n\n${HELP}`)
    return EXIT.usage
  }
  try {
    return await command(rest, io)
  } catch (e) {
    if (isTeaError(e)) {
      io.err(`tea ${name}: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`)
      return e.code === 'USAGE' || e.code === 'INVALID_INPUT' ? EXIT.usage : EXIT.failed
    }
    throw e
  }
}
