/**
 * Schedules of `tea serve`: cron expressions (croner) that start runs of agents in the agents folder.
 *
 * Policy, as a board needs it:
 * - **Missed while down**: when the board was off (or tea serve stopped) across one or more fire times, the
 *   schedule runs **once** at start, not once per missed time: a report due at 07:00 and 08:00 during a power
 *   cut runs one report when power returns. The last fire time of each schedule is kept in
 *   `<data-dir>/serve-schedules.json`; a schedule seen for the first time does not fire at start.
 * - **No overlap**: when a schedule's previous run is still running or queued at its next fire time, that fire
 *   is skipped and logged; the schedule fires again at the time after. The previous run's id is kept in the same
 *   file, written with the fire time before the run starts, so after a kill the run that the next start resumes
 *   is still the schedule's: its catch-up fire is skipped, not run beside it.
 *
 * The file: `{"<schedule name>": {"last": <ms since 1970>, "run": "<run id>"}}`; a bare number (the last fire
 * time, as older versions wrote it) is read too. It is replaced whole (a temporary file renamed over it), so a
 * kill mid-write leaves the previous one.
 * - A fire whose agent no longer loads, or that the memory guard refuses, is logged and skipped.
 */

import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Cron } from 'croner'
import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import { errorMessage, isTeaError, TeaError } from '../../core/errors.ts'
import { parseJson } from '../../core/json.ts'
import { isPlainObject } from '../../core/util.ts'
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

/** What is kept of one schedule: its last fire time and the run it started then. */
interface Fired {
  last: number
  run?: string
}

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
  const fired = readState(stateFile)
  const now = ctx.now?.() ?? new Date()
  const fire = (s: ScheduleEntry, at: Date, why: string): void => {
    const name = scheduleName(s)
    // After a restart this is the run of the previous process, resumed before the schedules start (index.ts).
    const previous = fired[name]?.run
    if (previous && ctx.manager.liveStatus(previous)) {
      ctx.log(`schedule ${name}: skipped at ${at.toISOString()}: its run ${previous} is still ${ctx.manager.liveStatus(previous)}`)
      return
    }
    const runId = `${safe(name)}-${sortableId()}`
    fired[name] = { last: at.getTime(), run: runId }
    writeState(stateFile, fired) // before the run exists: a kill in between leaves an id that names no run, harmless
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
    const seen = fired[name]?.last
    if (seen === undefined) {
      fired[name] = { last: now.getTime() } // first sight: from now on
    } else if (due && due.getTime() > seen) {
      fire(s, due, `missed at ${due.toISOString()} while tea serve was down`)
    }
    return job
  })
  writeState(stateFile, fired)
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

function readState(file: string): Record<string, Fired> {
  let data: unknown
  try {
    data = parseJson(readFileSync(file, 'utf8'), file)
  } catch {
    return {}
  }
  const state: Record<string, Fired> = Object.create(null)
  if (!isPlainObject(data)) return state
  for (const [name, v] of Object.entries(data)) {
    if (typeof v === 'number') state[name] = { last: v }
    else if (isPlainObject(v) && typeof v.last === 'number')
      state[name] = { last: v.last, ...(typeof v.run === 'string' && { run: v.run }) }
  }
  return state
}

function writeState(file: string, state: Record<string, Fired>): void {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, JSON.stringify(state))
  renameSync(temporary, file)
}
