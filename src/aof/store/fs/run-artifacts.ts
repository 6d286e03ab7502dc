/**
 * Run artifacts: `state/runs/<TASK-ID>/run.json` (who runs it, since when, status), `run_heartbeat.json` (refreshed
 * while the run is alive) and `run_result.json` (the agent's reported outcome). Pretty JSON written atomically, as
 * the reference does, in the folder the reference uses, so a run either implementation started is seen by both.
 * All three carry the `runId` minted when the lease was taken: a result or heartbeat whose run id is not the current
 * run's belongs to an earlier run and is never acted on. `run.json` also keeps it as `metadata.runId`, because the
 * reference rewrites `run.json` (completing or expiring a run) through a schema that drops unknown top-level keys
 * but keeps `metadata`.
 *
 * tea before issue 15 wrote to `runs/<TASK-ID>/`: that folder is still read when the new one is missing, and the
 * first write for the task moves it into place (`tea aof init` moves them all).
 */

import { parseJsonOrUndefined } from '../../../core/json.ts'
import { existsSync, readdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import * as v from 'valibot'
import { TeaError } from '../../../core/errors.ts'
import { toIssues } from '../../../core/issues.ts'
import { type AofContext, legacyRunDirPath, runDirPath } from './context.ts'
import { errno, isNotRegular, mkdirs, readError, readRegular, writeError, writeFileAtomic } from './fs-atomic.ts'
import { expiredRun } from '../../protocol/runs.ts'
import { isTaskId } from '../../protocol/task-id.ts'
import {
  type RunArtifact,
  RunArtifactSchema,
  type RunHeartbeat,
  RunHeartbeatSchema,
  type RunResult,
  RunResultSchema,
} from '../../protocol/schemas/run.ts'

type Kind = 'run.json' | 'run_heartbeat.json' | 'run_result.json' | 'previous_run_result.json'

export function runArtifactPath(ctx: AofContext, id: string, file: Kind): string {
  return join(runDirPath(ctx, id), file)
}

/** The folder a task's artifacts are read from: `state/runs/<ID>/`, else tea's old `runs/<ID>/` when only it exists. */
export function readableRunDir(ctx: AofContext, id: string): string {
  const dir = runDirPath(ctx, id)
  if (existsSync(dir)) return dir
  const legacy = legacyRunDirPath(ctx, id)
  return existsSync(legacy) ? legacy : dir
}

/**
 * Moves tea's old `runs/<ID>/` to `state/runs/<ID>/` when the new folder does not exist yet (callers hold the task
 * lock, or run at `init`). When both exist the new one wins and the old one is left for lint to report.
 */
export function migrateRunDir(ctx: AofContext, id: string): boolean {
  const dir = runDirPath(ctx, id)
  const legacy = legacyRunDirPath(ctx, id)
  if (existsSync(dir) || !existsSync(legacy)) return false
  mkdirs(join(ctx.dataDir, 'state', 'runs'))
  try {
    renameSync(legacy, dir)
  } catch (e) {
    throw writeError(e, dir)
  }
  return true
}

/** Every task folder under the old `runs/` moved to `state/runs/`; the ids moved. */
export function migrateRunDirs(ctx: AofContext): string[] {
  let names: string[]
  try {
    names = readdirSync(join(ctx.dataDir, 'runs'))
  } catch {
    return []
  }
  return names.filter((n) => isTaskId(n) && migrateRunDir(ctx, n))
}

function readArtifact<S extends v.GenericSchema>(ctx: AofContext, id: string, file: Kind, schema: S): v.InferOutput<S> | undefined {
  const path = join(readableRunDir(ctx, id), file)
  let raw: string
  try {
    raw = readRegular(path)
  } catch (e) {
    // Not a regular file (a FIFO would block, a symlink may lead anywhere): as foreign as a torn file, below.
    if (errno(e) === 'ENOENT' || isNotRegular(e)) return undefined
    throw readError(e, path, 'run artifact')
  }
  // A torn or foreign file is treated as absent, as the reference does; lint reports it.
  const json = parseJsonOrUndefined(raw)
  if (json === undefined) return undefined
  const r = v.safeParse(schema, json)
  return r.success ? r.output : undefined
}

function writeArtifact(ctx: AofContext, id: string, file: Kind, schema: v.GenericSchema, value: unknown): void {
  const r = v.safeParse(schema, value)
  if (!r.success) {
    throw new TeaError('AOF_INVALID', `refusing to write an invalid ${file} for ${id}`, { issues: toIssues(r.issues) })
  }
  migrateRunDir(ctx, id)
  mkdirs(runDirPath(ctx, id))
  writeFileAtomic(runArtifactPath(ctx, id, file), JSON.stringify(r.output, null, 2))
}

export function readRun(ctx: AofContext, id: string): RunArtifact | undefined {
  const run = readArtifact(ctx, id, 'run.json', RunArtifactSchema)
  if (!run || run.runId !== undefined) return run
  // Completed or expired by the reference, which keeps `metadata` but not our top-level `runId`.
  const kept = run.metadata.runId
  return typeof kept === 'string' && kept !== '' ? { ...run, runId: kept } : run
}

export function writeRun(ctx: AofContext, run: RunArtifact): void {
  writeArtifact(ctx, run.taskId, 'run.json', RunArtifactSchema, run)
}

export function readHeartbeat(ctx: AofContext, id: string): RunHeartbeat | undefined {
  return readArtifact(ctx, id, 'run_heartbeat.json', RunHeartbeatSchema)
}

export function writeHeartbeatFile(ctx: AofContext, hb: RunHeartbeat): void {
  writeArtifact(ctx, hb.taskId, 'run_heartbeat.json', RunHeartbeatSchema, hb)
}

export function readRunResult(ctx: AofContext, id: string): RunResult | undefined {
  return readArtifact(ctx, id, 'run_result.json', RunResultSchema)
}

export function writeRunResult(ctx: AofContext, result: RunResult): void {
  writeArtifact(ctx, result.taskId, 'run_result.json', RunResultSchema, result)
}

/**
 * Puts an earlier run's `run_result.json` aside as `previous_run_result.json` (which no implementation acts on) when
 * a new run starts. The reference's session-end applies whatever `run_result.json` an in-progress task has, without
 * asking which run wrote it; with the file gone it cannot send tea's new run to an earlier run's outcome.
 */
export function setAsideRunResult(ctx: AofContext, id: string): (() => void) | undefined {
  const from = runArtifactPath(ctx, id, 'run_result.json')
  if (!existsSync(from)) return undefined
  const to = runArtifactPath(ctx, id, 'previous_run_result.json')
  const before = existsSync(to) ? readRegular(to) : undefined
  try {
    renameSync(from, to)
  } catch (e) {
    throw writeError(e, from)
  }
  return () => {
    renameSync(to, from)
    if (before !== undefined) writeFileAtomic(to, before)
  }
}

export function markRunArtifactExpired(ctx: AofContext, id: string, reason: string): RunArtifact | undefined {
  const run = readRun(ctx, id)
  if (!run) return undefined
  const expired = expiredRun(run, ctx.now(), reason)
  writeRun(ctx, expired)
  return expired
}
