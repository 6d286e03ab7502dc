/**
 * `--help`, generated from a command's definition: a usage line (required flags spelled out), the summary and
 * description, its arguments, its subcommands, and a table of every flag it takes with its short form, default,
 * range and whether it repeats. Nothing here is written by hand per command, so help names every flag that
 * exists and no flag that does not.
 */

import { argLabel } from './argv.ts'
import type { Command, FlagDef } from './command.ts'
import { formatMs, rangeOf } from './flag-value.ts'

/** The widest left column before a description moves to its own line. */
const COLUMN = 30
const WIDTH = 110

/** Help for the last command of `path` (the root first: `[tea, aof, task]`). */
export function renderHelp(path: readonly Command[]): string {
  const command = path[path.length - 1]!
  const name = path.map((c) => c.name).join(' ')
  const flags = Object.entries(command.flags ?? {})
  const args = command.args ?? []
  const subs = command.subcommands ?? []

  const usage: string[] = []
  // The root runs only for --version, which its options table shows; any other command with `run` has a usage.
  if (command.run && (path.length > 1 || !subs.length)) {
    const required = flags.filter(([, d]) => d.type === 'string' && d.required).map(([n, d]) => `--${n} ${valueOf(d)}`)
    usage.push([name, ...args.map(argLabel), ...required, '[options]'].join(' '))
  }
  if (subs.length) usage.push(`${name} <command> [options]`)
  const out = [`Usage: ${usage.join('\n       ')}`, '', sentence(command.summary)]
  if (command.description) out.push('', command.description.trimEnd())
  if (args.length) out.push('', 'Arguments:', ...table(args.map((a) => [argLabel(a), a.description])))
  if (subs.length) out.push('', 'Commands:', ...table(subs.map((c) => [c.name, c.summary])))
  const rows = flags.map(([n, d]): [string, string] => [
    `${d.short ? `-${d.short}, ` : '    '}--${n}${d.type === 'boolean' ? '' : ` ${valueOf(d)}`}`,
    describe(d),
  ])
  rows.push(['-h, --help', 'show this help'])
  out.push('', 'Options:', ...table(rows))
  if (command.notes) out.push('', command.notes.trimEnd())
  if (subs.length) out.push('', `Run '${name} <command> --help' for a command's options.`)
  return `${out.join('\n')}\n`
}

function valueOf(def: FlagDef): string {
  if (def.type === 'enum') return def.values.join('|')
  if (def.type === 'boolean') return ''
  if (def.type === 'string' || def.type === 'list') return def.value
  return def.value ?? (def.type === 'duration' ? 'DURATION' : 'N')
}

/** The description, then what help adds from the definition: required, default, range, repeatable. */
function describe(def: FlagDef): string {
  const extra: string[] = []
  if (def.type === 'string') {
    if (def.required) extra.push('required')
    const d = def.defaultText ?? def.default
    if (d !== undefined) extra.push(`default: ${d}`)
  } else if (def.type === 'enum') {
    if (def.default !== undefined) extra.push(`default: ${def.default}`)
  } else if (def.type === 'list') {
    extra.push('repeatable')
  } else if (def.type !== 'boolean') {
    const ms = (n: number): string => (def.type === 'ms' ? `${n} = ${formatMs(n)}` : def.type === 'duration' ? formatMs(n) : `${n}`)
    if (def.default !== undefined) extra.push(`default: ${ms(def.default)}`)
    const { min, max } = rangeOf(def)
    extra.push(`${def.type === 'duration' ? formatMs(min) : min} to ${ms(max)}`)
  }
  return extra.length ? `${def.description} (${extra.join('; ')})` : def.description
}

function table(rows: Array<[string, string]>): string[] {
  const width = Math.max(0, ...rows.map(([left]) => left.length).filter((n) => n <= COLUMN))
  const pad = ' '.repeat(width + 4)
  return rows.flatMap(([left, right]) => {
    const lines = wrap(right, WIDTH - pad.length)
    if (left.length > width) return [`  ${left}`, ...lines.map((l) => pad + l)]
    return [`  ${left.padEnd(width)}  ${lines[0] ?? ''}`, ...lines.slice(1).map((l) => pad + l)]
  })
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(line)
  return lines
}

/** A summary (a lower-case phrase in lists) as the opening sentence of its own help. */
function sentence(summary: string): string {
  const s = summary.charAt(0).toUpperCase() + summary.slice(1)
  return /[.!?]$/.test(s) ? s : `${s}.`
}
