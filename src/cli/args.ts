/**
 * A small argv parser: declared flags only (an unknown flag is a usage error, not silently ignored), `--flag value`
 * and `--flag=value`, repeatable flags collected into arrays, short aliases, and `--` ending flags.
 */

import { TeaError } from '../core/errors.ts'

export interface FlagSpec {
  type: 'string' | 'boolean'
  short?: string
  /** Collect every occurrence into an array. */
  multiple?: boolean
}

export type FlagSpecs = Record<string, FlagSpec>

export type ParsedFlags<S extends FlagSpecs> = {
  [K in keyof S]?: S[K]['type'] extends 'boolean' ? boolean : S[K]['multiple'] extends true ? string[] : string
}

export interface Parsed<S extends FlagSpecs> {
  flags: ParsedFlags<S>
  positionals: string[]
}

export function parseArgs<S extends FlagSpecs>(argv: readonly string[], specs: S, command: string): Parsed<S> {
  const flags: Record<string, unknown> = {}
  const positionals: string[] = []
  const byShort = new Map<string, string>()
  for (const [name, spec] of Object.entries(specs)) if (spec.short) byShort.set(spec.short, name)

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    let name: string | undefined
    let inline: string | undefined
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      inline = eq === -1 ? undefined : arg.slice(eq + 1)
    } else if (arg.startsWith('-') && arg.length === 2 && arg !== '-') {
      name = byShort.get(arg.slice(1))
      if (!name) throw usage(command, `unknown option ${arg}`)
    } else {
      positionals.push(arg)
      continue
    }
    const spec = specs[name]
    if (!spec) throw usage(command, `unknown option --${name}`)
    let value: unknown
    if (spec.type === 'boolean') {
      if (inline !== undefined) throw usage(command, `--${name} takes no value`)
      value = true
    } else {
      value = inline ?? argv[++i]
      if (value === undefined) throw usage(command, `--${name} needs a value`)
    }
    if (spec.multiple) ((flags[name] ??= []) as unknown[]).push(value)
    else flags[name] = value
  }
  return { flags: flags as ParsedFlags<S>, positionals }
}

export function usage(command: string, message: string): TeaError {
  return new TeaError('USAGE', `${command}: ${message}`, { hint: `see 'tea ${command} --help'` })
}
