/** Shared plumbing of the `tea aof …` commands: the data dir, help text, and errors turned into exit codes. */

import { isAbsolute, resolve } from 'node:path'
import { TeaError, errorMessage, isTeaError } from '../core/errors.ts'
import { type AofContext, aofContext } from '../aof/index.ts'
import { isTaskId } from '../aof/index.ts'
import { type FlagSpecs, usage } from './args.ts'
import type { Io } from './io.ts'

export const AOF_EXIT = { ok: 0, failed: 1, usage: 2 } as const

export const DATA_DIR_FLAG = { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const satisfies FlagSpecs

export function dataDirOf(flag: string | undefined, io: Io): string {
  const dir = flag ?? io.env.TEA_DATA_DIR ?? './.tea'
  return isAbsolute(dir) ? dir : resolve(io.cwd, dir)
}

export function contextOf(flag: string | undefined, io: Io, now?: Date): AofContext {
  return aofContext(dataDirOf(flag, io), now ? { now: () => now } : {})
}

export function requireTaskId(command: string, id: string | undefined): string {
  if (id === undefined) throw usage(command, 'expected a task id')
  if (!isTaskId(id)) {
    throw usage(command, `expected a task id like TASK-2026-02-09-001 or TASK-2026-02-09-Ab3dEf7h, received ${JSON.stringify(id)}`)
  }
  return id
}

export function requireString(command: string, name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw usage(command, `--${name} is required`)
  return value
}

export function parseMs(command: string, name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw usage(command, `--${name} expects a positive integer of milliseconds, received ${JSON.stringify(value)}`)
  return n
}

export function parseNow(command: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const t = Date.parse(value)
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    throw usage(command, `--now expects an ISO 8601 date-time such as 2026-02-10T10:05:00.000Z, received ${JSON.stringify(value)}`)
  }
  return new Date(t)
}

/** Runs a subcommand body, printing a TeaError the way `tea` does and mapping it to an exit code. */
export async function guarded(command: string, io: Io, body: () => Promise<number>): Promise<number> {
  try {
    return await body()
  } catch (e) {
    if (!isTeaError(e)) throw e
    const text = errorMessage(e)
    io.err(`tea ${command}: ${text.startsWith(`${command}: `) ? text.slice(command.length + 2) : text}\n`)
    if (e.hint) io.err(`hint: ${e.hint}\n`)
    return e.code === 'USAGE' || e.code === 'INVALID_INPUT' ? AOF_EXIT.usage : AOF_EXIT.failed
  }
}

export function printHelp(io: Io, text: string): number {
  io.out(text)
  return AOF_EXIT.ok
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

export { TeaError }
