/**
 * Run artifacts: `runs/<TASK-ID>/run.json` (who runs it, since when, status), `run_heartbeat.json` (refreshed while
 * the run is alive) and `run_result.json` (the agent's reported outcome). Pretty JSON written atomically, as the
 * reference does. All three carry the `runId` minted when the lease was taken: a result or heartbeat whose run id
 * is not the current run's belongs to an earlier run and is never acted on.
 */

import { join } from 'node:path'
import * as v from 'valibot'
import { TeaError } from '../core/errors.ts'
import { toIssues } from '../core/issues.ts'
import { type AofContext, runDirPath } from './context.ts'
import { errno, isNotRegular, readError, readRegular, writeFileAtomic } from './fs-atomic.ts'
import {
  type RunArtifact,
  RunArtifactSchema,
  type RunHeartbeat,
  RunHeartbeatSchema,
  type RunResult,
  RunResultSchema,
} from './schemas/run.ts'

type Kind = 'run.json' | 'run_heartbeat.json' | 'run_result.json'

export function runArtifactPath(ctx: AofContext, id: string, file: Kind): string {
  return join(runDirPath(ctx, id), file)
}

function readArtifact<S extends v.GenericSchema>(ctx: AofContext, id: string, file: Kind, schema: S): v.InferOutput<S> | undefined {
  let raw: string
  try {
    raw = readRegular(runArtifactPath(ctx, id, file))
  } catch (e) {
    // Not a regular file (a FIFO would block, a symlink may lead anywhere): as foreign as a torn file, below.
    if (errno(e) === 'ENOENT' || isNotRegular(e)) return undefined
    throw readError(e, runArtifactPath(ctx, id, file), 'run artifact')
  }
  // A torn or foreign file is treated as absent, as the reference does; lint reports it.
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    return undefined
  }
  const r = v.safeParse(schema, json)
  return r.success ? r.output : undefined
}

function writeArtifact(ctx: AofContext, id: string, file: Kind, schema: v.GenericSchema, value: unknown): void {
  const r = v.safeParse(schema, value)
  if (!r.success) {
    throw new TeaError('AOF_INVALID', `refusing to write an invalid ${file} for ${id}`, { issues: toIssues(r.issues) })
  }
  writeFileAtomic(runArtifactPath(ctx, id, file), JSON.stringify(r.output, null, 2))
}

export function readRun(ctx: AofContext, id: string): RunArtifact | undefined {
  return readArtifact(ctx, id, 'run.json', RunArtifactSchema)
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
 * Whether `result` was produced by `run`. With run ids on both sides they must match; a result without one
 * (written by the reference implementation) counts only if it was completed after the run started.
 */
export function resultBelongsToRun(result: RunResult, run: RunArtifact | undefined): boolean {
  if (!run) return result.runId === undefined
  if (result.runId !== undefined || run.runId !== undefined) return result.runId === run.runId
  return Date.parse(result.completedAt) >= Date.parse(run.startedAt)
}

export function completeRunArtifact(ctx: AofContext, id: string): RunArtifact | undefined {
  const run = readRun(ctx, id)
  if (!run) return undefined
  const done: RunArtifact = { ...run, status: 'completed', metadata: { ...run.metadata, completedAt: ctx.now().toISOString() } }
  writeRun(ctx, done)
  return done
}

export function markRunArtifactExpired(ctx: AofContext, id: string, reason: string): RunArtifact | undefined {
  const run = readRun(ctx, id)
  if (!run) return undefined
  const expired: RunArtifact = {
    ...run,
    status: 'failed',
    metadata: { ...run.metadata, expiredAt: ctx.now().toISOString(), expiredReason: reason },
  }
  writeRun(ctx, expired)
  return expired
}
