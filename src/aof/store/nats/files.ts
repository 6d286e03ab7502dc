/**
 * A task's run files and companion files on NATS: run files are entries of the runs bucket (`<ID>.run`,
 * `.heartbeat`, `.result`, `.previous_result`, under the names the filesystem store gives them in
 * `state/runs/<ID>/`); companion files are objects `<ID>/<path>` of `<p>_files`, listed in `<ID>.files`.
 */

import { handoffInputsOf } from '../../protocol/handoff.ts'
import type { Task } from '../../protocol/task-file.ts'
import type { RunFileName } from '../port.ts'
import { relativePath } from '../shared.ts'
import { isConflict } from './client.ts'
import type { NatsContext } from './context.ts'
import { checkedId } from './entries.ts'
import { mustRead } from './task-entry.ts'

/** The key in `p_runs` of each run file. */
const RUN_KEYS: Record<RunFileName, string> = {
  'run.json': 'run',
  'run_heartbeat.json': 'heartbeat',
  'run_result.json': 'result',
  'previous_run_result.json': 'previous_result',
}

const dec = new TextDecoder()

export async function readRunFile(ctx: NatsContext, id: string, name: RunFileName): Promise<string | undefined> {
  const e = await ctx.runs.get(`${checkedId(id)}.${RUN_KEYS[name]}`)
  return e && e.operation === 'PUT' ? ctx.unpack(e.value) : undefined
}

export async function writeRunFile(ctx: NatsContext, id: string, name: RunFileName, text: string | undefined): Promise<void> {
  const key = `${checkedId(id)}.${RUN_KEYS[name]}`
  if (text === undefined) await ctx.runs.delete(key)
  else await ctx.runs.put(key, await ctx.pack(text))
}

export async function listFiles(ctx: NatsContext, id: string): Promise<string[]> {
  return (await ctx.bucket.readJson<string[]>(`${checkedId(id)}.files`)) ?? []
}

export async function readFile(ctx: NatsContext, id: string, path: string): Promise<Uint8Array | undefined> {
  return (await ctx.files.getBlob(`${checkedId(id)}/${relativePath(path)}`)) ?? undefined
}

export async function writeFile(ctx: NatsContext, id: string, path: string, bytes: Uint8Array): Promise<void> {
  await mustRead(ctx, id)
  const rel = relativePath(path)
  await ctx.files.putBlob({ name: `${id}/${rel}`, options: { max_chunk_size: ctx.big.chunkSize } }, bytes)
  // The task's file list, kept beside its runs: the object store can only list every object of the project.
  for (;;) {
    const e = await ctx.runs.get(`${id}.files`)
    const listed: string[] = e && e.operation === 'PUT' ? JSON.parse(await ctx.unpack(e.value)) : []
    if (listed.includes(rel)) return
    const value = await ctx.pack(JSON.stringify([...listed, rel].sort()))
    try {
      if (e && e.operation === 'PUT') await ctx.runs.update(`${id}.files`, value, e.revision)
      else await ctx.runs.create(`${id}.files`, value)
      return
    } catch (err) {
      if (!isConflict(err)) throw err
    }
  }
}

export async function handoffInputs(ctx: NatsContext, task: Task): Promise<ReturnType<typeof handoffInputsOf>> {
  const bytes = await ctx.files.getBlob(`${checkedId(task.id)}/inputs/handoff.json`)
  return handoffInputsOf(bytes ? dec.decode(bytes) : undefined)
}
