/**
 * A command, declared once: its name, a one-line summary, its arguments and flags (each with a type, a short form,
 * a default, a range for numbers and a description), its subcommands, and what it runs. Everything else is derived
 * from that one value: `--help` (help.ts), the parsing and coercion of argv before `run` sees it (argv.ts), and the
 * exit code of whatever `run` throws (main.ts `runMain`). citty's shape, without the dependency.
 *
 * Definitions live in `commands/` and import nothing heavy: `tea --version` and every `--help` are answered from
 * them, and a command's `run` imports its implementation on demand, so a command pays only for what it uses.
 */

import { TeaError } from '../core/errors.ts'
import { closest } from '../core/util.ts'
import type { Io } from './io.ts'

interface FlagBase {
  /** One line for the help table. */
  description: string
  /** A one-letter alias, without its dash: `i` for `-i, --input`. */
  short?: string
}

/** A switch: present or not. It takes no value (`--json=yes` is a usage error). */
export interface BooleanFlag extends FlagBase {
  type: 'boolean'
}

/** Any text. `value` names it in help (`--data-dir DIR`). */
export interface StringFlag extends FlagBase {
  type: 'string'
  value: string
  /** Present and not empty, or the command is not run. */
  required?: boolean
  default?: string
  /** The default as help shows it, when it is not a fixed value (`$TEA_DATA_DIR, else ./.tea`). */
  defaultText?: string
}

/** Repeatable text: every occurrence, in order (`--set a=1 --set b=2`). */
export interface ListFlag extends FlagBase {
  type: 'list'
  value: string
}

/** One of a fixed set of words. */
export interface EnumFlag extends FlagBase {
  type: 'enum'
  values: readonly string[]
  default?: string
}

/**
 * A number, checked against `[min, max]` (defaults in argv.ts `RANGES`): `int` a whole number, `ms` a whole number
 * of milliseconds, `duration` a number with a unit (`30m`, `12h`, `7d`; a bare number is seconds), given to `run`
 * in milliseconds.
 */
export interface NumberFlag extends FlagBase {
  type: 'int' | 'ms' | 'duration'
  value?: string
  default?: number
  min?: number
  max?: number
}

export type FlagDef = BooleanFlag | StringFlag | ListFlag | EnumFlag | NumberFlag
export type FlagDefs = Readonly<Record<string, FlagDef>>

/** A positional argument, in order. `optional` ones come last; a `variadic` one takes the rest. */
export interface ArgDef {
  name: string
  /** How help shows it: `agent.yaml` in `tea run <agent.yaml>`. The name when not given. */
  value?: string
  description: string
  optional?: boolean
  variadic?: boolean
}

type FlagValue<D> = D extends BooleanFlag
  ? boolean
  : D extends ListFlag
    ? string[]
    : D extends { type: 'enum'; values: readonly (infer V)[] }
      ? D extends { default: string }
        ? V
        : V | undefined
      : D extends NumberFlag
        ? D extends { default: number }
          ? number
          : number | undefined
        : D extends { default: string } | { required: true }
          ? string
          : string | undefined

type ArgValue<D> = D extends { variadic: true } ? string[] : D extends { optional: true } ? string | undefined : string

/** What `run` receives: every flag (booleans false and lists empty when absent, defaults applied) and every argument. */
export interface Input<F extends FlagDefs = FlagDefs, A extends readonly ArgDef[] = readonly ArgDef[]> {
  flags: { -readonly [K in keyof F]: FlagValue<F[K]> }
  args: { [D in A[number] as D['name']]: ArgValue<D> }
}

export interface CommandDef<F extends FlagDefs = FlagDefs, A extends readonly ArgDef[] = readonly ArgDef[]> {
  /** The word that selects it (`create` in `tea aof task create`). */
  name: string
  /** One line: the parent's list of commands and the head of its own help. */
  summary: string
  /** More paragraphs for its own help. */
  description?: string
  args?: A
  flags?: F
  subcommands?: readonly Command[]
  /** Text after the options (exit codes, environment). */
  notes?: string
  /**
   * Runs the command and returns its exit code. Whatever it throws becomes an exit code in `runMain`. A command
   * without `run` is a group: without a subcommand it prints its help and exits 2.
   */
  run?(input: Input<F, A>, io: Io): Promise<number>
}

/** A command of any shape, as a parent holds its subcommands. (`run` is a method, so its input is bivariant.) */
export type Command = CommandDef<FlagDefs, readonly ArgDef[]>

/** Types a definition: the flags' and arguments' literal shapes become the types `run` receives. */
export function defineCommand<const F extends FlagDefs = {}, const A extends readonly ArgDef[] = []>(
  def: CommandDef<F, A>,
): CommandDef<F, A> {
  return def
}

/**
 * The command `argv` names, walking subcommands from `root` while the next word names one: `[tea, aof, task]` and
 * the words left for it. A word that names none is left for the command to take as an argument or refuse.
 */
export function resolveCommand(root: Command, argv: readonly string[]): { path: Command[]; rest: string[] } {
  const path = [root]
  let i = 0
  for (; i < argv.length; i++) {
    const sub = path[path.length - 1]!.subcommands?.find((c) => c.name === argv[i])
    if (!sub) break
    path.push(sub)
  }
  return { path, rest: argv.slice(i) }
}

/** The usage error for a word that names no subcommand of the last command of `path`, with the nearest names. */
export function unknownCommand(path: readonly Command[], word: string): TeaError {
  const names = (path[path.length - 1]!.subcommands ?? []).map((c) => c.name)
  const near = closest(word, names, 2)
  const label = path.map((c) => c.name).join(' ')
  return new TeaError(
    'USAGE',
    `unknown command '${word}'${near.length ? ` (did you mean ${near.map((n) => `'${n}'`).join(' or ')}?)` : ''}`,
    {
      hint: `'${label} --help' lists the commands`,
    },
  )
}
