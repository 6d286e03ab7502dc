/**
 * argv → a command's `Input`, against its definition. Flags may come before or after arguments, as `--flag value`
 * or `--flag=value`, short forms as `-i value`; `--` ends the flags. Only declared flags exist: an unknown flag,
 * a missing value, a value given to a switch, a value out of its range, a missing required flag and a wrong
 * number of arguments are each a problem, and every problem is reported at once (one usage error, exit 2).
 * `--help`/`-h` anywhere (except as a flag's value) asks for help and wins over any problem.
 */

import { TeaError } from '../core/errors.ts'
import { closest } from '../core/util.ts'
import type { ArgDef, Command, Input } from './command.ts'
import { coerceFlag } from './flag-value.ts'

export type Parsed = { help: true } | { help: false; input: Input }

export function parseArgv(command: Command, argv: readonly string[]): Parsed {
  const defs = command.flags ?? {}
  const byShort = new Map<string, string>()
  for (const [name, def] of Object.entries(defs)) if (def.short) byShort.set(def.short, name)
  const raw = new Map<string, unknown>()
  const positionals: string[] = []
  const problems: string[] = []
  let help = false
  let unknown = false

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (arg === '--help' || arg === '-h') {
      help = true
      continue
    }
    let name: string | undefined
    let inline: string | undefined
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      inline = eq === -1 ? undefined : arg.slice(eq + 1)
    } else if (arg.length > 1 && arg.startsWith('-')) {
      name = arg.length === 2 ? byShort.get(arg.slice(1)) : undefined
      if (name === undefined) {
        problems.push(`unknown option ${arg}`)
        unknown = true
        continue
      }
    } else {
      positionals.push(arg) // `-` alone is an argument: stdin
      continue
    }
    const def = Object.hasOwn(defs, name) ? defs[name] : undefined
    if (!def) {
      const near = closest(name, Object.keys(defs), 1)
      problems.push(`unknown option --${name}${near.length ? ` (did you mean --${near[0]}?)` : ''}`)
      unknown = true
      continue
    }
    if (def.type === 'boolean') {
      if (inline !== undefined) problems.push(`--${name} takes no value`)
      else raw.set(name, true)
      continue
    }
    // The next word is the value whatever it looks like, so `--ttl-ms -5` is a range problem, not an unknown flag.
    const text = inline ?? argv[++i]
    if (text === undefined) {
      problems.push(
        `--${name} needs a value (${def.type === 'list' || def.type === 'string' ? def.value : def.type === 'enum' ? def.values.join('|') : (def.value ?? 'N')})`,
      )
      continue
    }
    if (def.type === 'list') {
      raw.set(name, [...((raw.get(name) as string[] | undefined) ?? []), text])
      continue
    }
    const coerced = coerceFlag(name, def, text)
    if (coerced.ok) raw.set(name, coerced.value)
    else problems.push(coerced.message)
  }
  if (help) return { help: true }

  const flags: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(defs)) {
    const value = raw.get(name)
    if (def.type === 'string' && def.required && (value === undefined || value === '')) problems.push(`--${name} is required`)
    flags[name] = value ?? (def.type === 'boolean' ? false : def.type === 'list' ? [] : def.default)
  }
  // After an unknown flag its value may sit among the arguments, so counting them would only add noise.
  const args = unknown ? {} : bindArgs(command.args ?? [], positionals, problems)
  if (problems.length === 1) throw new TeaError('USAGE', problems[0]!)
  if (problems.length)
    throw new TeaError('USAGE', `${problems.length} problems with the command line`, { issues: problems.map((message) => ({ message })) })
  // Built from the definition itself, so it has the shape `Input` derives from that definition.
  return { help: false, input: { flags, args } as Input }
}

function bindArgs(defs: readonly ArgDef[], positionals: string[], problems: string[]): Record<string, unknown> {
  const args: Record<string, unknown> = {}
  defs.forEach((def, i) => {
    if (def.variadic) args[def.name] = positionals.slice(i)
    else if (positionals[i] !== undefined) args[def.name] = positionals[i]
    else if (!def.optional) problems.push(`missing ${argLabel(def)}: ${def.description}`)
  })
  const max = defs.some((d) => d.variadic) ? Infinity : defs.length
  if (positionals.length > max) problems.push(`unexpected argument ${JSON.stringify(positionals[max])}`)
  return args
}

/** `<agent.yaml>`, `[FILE]`, `[command...]`: how usage lines and messages show an argument. */
export function argLabel(def: ArgDef): string {
  const text = `${def.value ?? def.name}${def.variadic ? '...' : ''}`
  return def.optional || def.variadic ? `[${text}]` : `<${text}>`
}
