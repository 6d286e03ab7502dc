/**
 * Schedules of `tea serve`: cron expressions (croner) that start runs of agents in the agents folder.
 *
 * Policy, as a board needs it:
 * - **Missed while down**: when the board was off (or tea serve stopped) across one or more fire times, the
 *   schedule runs **once** at start, not once per missed time: a report due at 07:00 and 08:00 during a power
 *   cut runs one report when power returns. The last fire time of each schedule is kept in
 *   `<data-dir>/serve-schedules.json`; a schedule seen for the first time does not fire at start.
 * - **No overlap**: when a schedule's previous run is still running or queued at its next fire time, that fire
 *   is skipped and logged; the schedule fires again at the time after.
 * - A fire whose agent no longer loads, or that the memory guard refuses, is logged and skipped.
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Cron } from 'croner'
import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import { errorMessage, isTeaError, TeaError } from '../../core/errors.ts'
import { sortableId } from '../../core/ids.ts'
import { resolveAgent } from './agents.ts'
import type { ScheduleEntry } from './config.ts'
import type { RunManager } from './run-manager.ts'

export interface ScheduleContext {
  manager: RunManager
  registry: Registry
  agentsDir: string
  dataDir: string
  log(line: string): void
  now?: () => Date
}

const STATE_FILE = 'serve-schedules.json'

/** A schedule's name: its own, else `agent@cron`. */
export function scheduleName(s: ScheduleEntry): string {
  return s.name ?? `${s.agent}@${s.cron}`
}

/** Checks every cron expression before anything starts (a bad one is a usage error naming the schedule). */
export function checkSchedules(schedules: readonly ScheduleEntry[]): void {
  const problems = schedules.flatMap((s, i) => {
    try {
      new Cron(s.cron, { paused: true, ...(s.timezone && { timezone: s.timezone }) }).stop()
      return []
    } catch (e) {
      return [{ message: `schedule ${scheduleName(s)}: ${(e as Error).message}`, path: ['schedules', i, 'cron'] }]
    }
  })
  if (problems.length) throw new TeaError('USAGE', 'the serve config has schedules that do not parse', { issues: problems })
}

export function startSchedules(schedules: readonly ScheduleEntry[], ctx: ScheduleContext): { stop(): void } {
  checkSchedules(schedules)
  const stateFile = join(ctx.dataDir, STATE_FILE)
  const last = readState(stateFile)
  const now = ctx.now?.() ?? new Date()
  const lastRun = new Map<string, string>()
  const fire = (s: ScheduleEntry, at: Date, why: string): void => {
    const name = scheduleName(s)
    const previous = lastRun.get(name)
    if (previous && ctx.manager.liveStatus(previous)) {
      ctx.log(`schedule ${name}: skipped at ${at.toISOString()}: its run ${previous} is still ${ctx.manager.liveStatus(previous)}`)
      return
    }
    last[name] = at.getTime()
    writeState(stateFile, last)
    const runId = `${safe(name)}-${sortableId()}`
    lastRun.set(name, runId)
    try {
      requireAgentLoading(resolveAgent(ctx.agentsDir, s.agent), ctx.registry)
        .then((spec) => ctx.manager.start(spec, runId, s.input ?? {}))
        .then(() => ctx.log(`schedule ${name}: started ${runId} (${why})`))
        .catch((e: unknown) => ctx.log(`schedule ${name}: not started: ${describe(e)}`))
    } catch (e) {
      ctx.log(`schedule ${name}: not started: ${describe(e)}`)
    }
  }
  const jobs = schedules.map((s) => {
    const job = new Cron(s.cron, { ...(s.timezone && { timezone: s.timezone }), protect: false }, () => fire(s, new Date(), 'scheduled'))
    const name = scheduleName(s)
    const due = job.previousRuns(1, now)[0]
    const seen = last[name]
    if (seen === undefined) {
      last[name] = now.getTime() // first sight: from now on
    } else if (due && due.getTime() > seen) {
      fire(s, due, `missed at ${due.toISOString()} while tea serve was down`)
    }
    return job
  })
  writeState(stateFile, last)
  return { stop: () => jobs.forEach((j) => j.stop()) }
}

function describe(e: unknown): string {
  return isTeaError(e) ? `[${e.code}] ${errorMessage(e)}` : String(e)
}

function safe(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 60) || 'schedule'
  )
}

function readState(file: string): Record<string, number> {
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as unknown
    return data && typeof data === 'object' ? (data as Record<string, number>) : {}
  } catch {
    return {}
  }
}

function writeState(file: string, state: Record<string, number>): void {
  writeFileSync(file, JSON.stringify(state))
}
