/**
 * What `tea run` and `tea resume` (and, in part, `tea worker`) share around the engine's run lifecycle: the data
 * dir, the store, the model client from the flags, the event stream turned into progress, NDJSON or a trace, and
 * a run's result turned into output and an exit code (SPEC §3.1).
 */

import { errorMessage, TeaError } from '../core/errors.ts'
import { appendFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { AgentSpec } from '../agent/types.ts'
import type { RunEvent } from '../core/events.ts'
import type { RunResult, RunServices } from '../engine/lifecycle.ts'
import type { Registry } from '../actions/registry.ts'
import type { AofRouter } from '../actions/types.ts'
import type { LlmClientOptions } from '../llm/client.ts'
import type { LlmClient } from '../llm/types.ts'
import { openLmdbStore } from '../store/lmdb-store.ts'
import type { Store } from '../store/types.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { progressPrinter } from './progress.ts'

export async function openStore(dataDir: string): Promise<Store> {
  return openLmdbStore(dataDir)
}

export interface OutputOptions {
  stream?: boolean
  quiet?: boolean
  output?: string
  trace?: string
  record?: string
  replay?: string
}

/**
 * The model client for an agent as it will run: its settings' defaults, a cassette to record to or replay from.
 * Without a cassette the client's modules (every provider) are loaded at the first model call, so a run that
 * makes none does not load them; a cassette is opened at once, so that a wrong path fails before the run.
 */
export async function modelClient(io: Io, opts: { record?: string; replay?: string }): Promise<(spec: AgentSpec) => LlmClient> {
  const options = (spec: AgentSpec): LlmClientOptions => ({
    env: io.env,
    defaults: spec.settings.llm,
    ...(opts.record && { record: resolve(io.cwd, opts.record) }),
    ...(opts.replay && { replay: resolve(io.cwd, opts.replay) }),
  })
  const load = () => import('../llm/client.ts')
  if (opts.record || opts.replay) {
    const { createLlmClient } = await load()
    return (spec) => createLlmClient(options(spec))
  }
  return (spec) => clientOnFirstCall(async () => (await load()).createLlmClient(options(spec)))
}

function clientOnFirstCall(make: () => Promise<LlmClient>): LlmClient {
  let client: Promise<LlmClient> | undefined
  const get = (): Promise<LlmClient> => (client ??= make())
  return {
    call: async (request) => (await get()).call(request),
    async embed(request) {
      const c = await get()
      if (!c.embed) throw new TeaError('LLM_BAD_MODEL', 'this model client has no embeddings')
      return c.embed(request)
    },
    close: async () => (client ? (await client).close() : undefined),
  }
}

/**
 * What `tea run` and `tea resume` hand the run lifecycle: the store and registry they opened, the model client and
 * event sink their flags ask for, the signal that stops the run on Ctrl-C, and a model override.
 */
export async function runServices(
  io: Io,
  flags: OutputOptions & { model?: string },
  opened: { store: Store; registry: Registry; dataDir: string; signal: AbortSignal; aof?: AofRouter },
): Promise<RunServices> {
  return {
    ...opened,
    llm: await modelClient(io, flags),
    emit: eventSink(io, flags),
    ...(flags.model && { model: flags.model }),
  }
}

/** Where a run's events go: NDJSON on stdout with --stream, a timestamped trace file, progress on stderr. */
export function eventSink(io: Io, opts: OutputOptions): (event: RunEvent) => void {
  const progress = opts.quiet || opts.stream ? undefined : progressPrinter(io)
  const trace = opts.trace ? resolve(io.cwd, opts.trace) : undefined
  if (trace) writeFileSync(trace, '')
  if (opts.replay && !opts.quiet && !opts.stream)
    io.err(`tea: replaying model replies from ${opts.replay} (no model server is contacted)\n`)
  return (event) => {
    if (opts.stream) io.out(`${JSON.stringify(event)}\n`)
    if (trace) appendFileSync(trace, `${JSON.stringify({ ts: Date.now(), ...event })}\n`)
    progress?.(event)
  }
}

/** Prints a run's result as SPEC §3.1 says and returns the exit code. */
export function reportRun(io: Io, result: RunResult, opts: OutputOptions, dataDir: string): number {
  const { runId } = result
  const stateJson = `${JSON.stringify(result.state, null, 2)}\n`
  if (result.status === 'completed' || result.status === 'interrupted') {
    if (opts.output) writeFileSync(resolve(io.cwd, opts.output), stateJson)
    else if (!opts.stream) io.out(stateJson)
  }
  // A run that replays a cassette goes on from the same cassette: without it, resuming offline would call a server.
  const resume = `tea resume ${runId}${dataDirHint(dataDir, io)}${opts.replay ? ` --replay ${opts.replay}` : ''}`
  switch (result.status) {
    case 'completed':
      return EXIT.ok
    case 'interrupted':
      io.err(`tea: run ${runId} paused ${result.interrupt} node '${result.node}'. Continue with: ${resume}\n`)
      return EXIT.interrupted
    case 'cancelled':
      io.err(`tea: run ${runId} stopped; its last checkpoint is saved. Continue with: ${resume}\n`)
      return EXIT.signal
    case 'failed': {
      const e = result.error!
      io.err(
        `tea: run ${runId} failed: [${e.code}] ${errorMessage(e)}\n${e.hint ? `hint: ${e.hint}\n` : ''}tea: the run is resumable once the cause is fixed: ${resume}\n`,
      )
      return EXIT.failed
    }
  }
}

function dataDirHint(dataDir: string, io: Io): string {
  return dataDir === dataDirOf(undefined, io) ? '' : ` --data-dir ${dataDir}`
}
