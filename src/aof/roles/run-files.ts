/**
 * Run artifacts read and written through the port (store/fs/run-artifacts.ts is the filesystem's own, with its folder layout): the same
 * schemas and the same rules — a torn or foreign file reads as absent, an invalid one is never written, pretty JSON
 * as the reference writes it — over `TaskStore.readRunFile` / `writeRunFile`.
 */

import { parseJsonOrUndefined } from '../../core/json.ts'
import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { toIssues } from '../../core/issues.ts'
import { type RunArtifact, RunArtifactSchema, type RunResult, RunResultSchema } from '../protocol/schemas/run.ts'
import { completedRun } from '../protocol/runs.ts'
import type { RunFileName, TaskStore } from '../store/port.ts'

async function readOn<S extends v.GenericSchema>(
  store: TaskStore,
  id: string,
  name: RunFileName,
  schema: S,
): Promise<v.InferOutput<S> | undefined> {
  const text = await store.readRunFile(id, name)
  if (text === undefined) return undefined
  const json = parseJsonOrUndefined(text)
  if (json === undefined) return undefined
  const r = v.safeParse(schema, json)
  return r.success ? r.output : undefined
}

async function writeOn(store: TaskStore, id: string, name: RunFileName, schema: v.GenericSchema, value: unknown): Promise<void> {
  const r = v.safeParse(schema, value)
  if (!r.success) throw new TeaError('AOF_INVALID', `refusing to write an invalid ${name} for ${id}`, { issues: toIssues(r.issues) })
  await store.writeRunFile(id, name, JSON.stringify(r.output, null, 2))
}

export const readRunResultOn = (store: TaskStore, id: string): Promise<RunResult | undefined> =>
  readOn(store, id, 'run_result.json', RunResultSchema)

export const writeRunResultOn = (store: TaskStore, result: RunResult): Promise<void> =>
  writeOn(store, result.taskId, 'run_result.json', RunResultSchema, result)

/** Marks the task's run completed (at the store's time); nothing when there is no run. */
export async function completeRunOn(store: TaskStore, id: string): Promise<RunArtifact | undefined> {
  const run = await store.readRun(id)
  if (!run) return undefined
  const done = completedRun(run, await store.now())
  await writeOn(store, id, 'run.json', RunArtifactSchema, done)
  return done
}

/** An earlier run's result moved aside as `previous_run_result.json`, where no session end applies it. */
export async function setAsideRunResultOn(store: TaskStore, id: string): Promise<void> {
  const text = await store.readRunFile(id, 'run_result.json')
  if (text === undefined) return
  await store.writeRunFile(id, 'previous_run_result.json', text)
  await store.writeRunFile(id, 'run_result.json', undefined)
}
