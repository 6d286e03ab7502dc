/**
 * What `tea run`, `tea resume` (and `tea worker`) share: the data dir, the store, signal handling, and turning a
 * run's events and outcome into output and an exit code (SPEC §3.1).
 */

import { appendFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { RunEvent } from '../actions/types.ts'
import type { Registry } from '../actions/registry.ts'
import type { AgentSpec } from '../agent/types.ts'
import { cancelled } from '../core/signals.ts'
import { compileAgent } from '../engine/compile.ts'
import { runAgent, type RunStart } from '../engine/run.ts'
import { createLlmClient, parseModelSpec } from '../llm/index.ts'
import type { LlmClient } from '../llm/types.ts'
import { openLmdbStore } from '../store/lmdb-store.ts'
import type { RunRecord, Store } from '../store/types.ts'
import { processAlive } from '../core/process.ts'
import type { FlagSpecs } from './args.ts'
import type { Io } from './io.ts'
import { EXIT } from './exit.ts'
import { progressPrinter } from './progress.ts'
import { leanLoad } from './lean.ts'

/** The flags `tea run` and `tea resume` share. */
export const RUN_FLAGS = {
  input: { type: 'string', short: 'i' },
  set: { type: 'string', multiple: true },
  model: { type: 'string' },
  'data-dir': { type: 'string' },
  stream: { type: 'boolean' },
  output: { type: 'string', short: 'o' },
  trace: { type: 'string' },
  record: { type: 'string' },
  replay: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} satisfies FlagSpecs

/** A run marked running whose process is alive and is not this one: resuming it would run it twice. */
export function runningElsewhere(run: RunRecord): boolean {
  return run.status === 'running' && run.pid !== undefined && run.pid !== process.pid && processAlive(run.pid)
}

export function dataDirOf(flag: string | undefined, io: Io): string {
  return resolve(io.cwd, flag ?? io.env.TEA_DATA_DIR ?? '.tea')
}

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
 * The model client for a run, made before the run is recorded so that a bad `--model`, `--record`/`--replay`
 * combination or missing cassette is a usage error that leaves nothing behind. `--model` overrides
 * settings.llm.model (it is checked here, not at the first model call).
 */
export function modelClient(io: Io, spec: AgentSpec, opts: OutputOptions & { model?: string }): LlmClient {
  if (opts.model) {
    parseModelSpec(opts.model)
    spec.settings.llm = { ...spec.settings.llm, model: opts.model }
  }
  return createLlmClient({
    env: io.env,
    defaults: spec.settings.llm,
    ...(opts.record && { record: resolve(io.cwd, opts.record) }),
    ...(opts.replay && { replay: resolve(io.cwd, opts.replay) }),
  })
}

/** Runs (or resumes) to an outcome and reports it; returns the exit code. Closes the store and the client. */
export async function execute(
  io: Io,
  spec: AgentSpec,
  registry: Registry,
  store: Store,
  llm: LlmClient,
  runId: string,
  dataDir: string,
  start: RunStart,
  opts: OutputOptions,
): Promise<number> {
  const controller = new AbortController()
  let signals = 0
  const onSignal = (name: NodeJS.Signals): void => {
    if (++signals > 1) process.exit(EXIT.signal) // a second Ctrl-C means now
    io.err(`\ntea: ${name}: stopping after the current checkpoint…\n`)
    controller.abort(cancelled(name))
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  const progress = opts.quiet || opts.stream ? undefined : progressPrinter(io)
  const trace = opts.trace ? resolve(io.cwd, opts.trace) : undefined
  if (trace) writeFileSync(trace, '')
  const emit = (event: RunEvent): void => {
    if (opts.stream) io.out(`${JSON.stringify(event)}\n`)
    if (trace) appendFileSync(trace, `${JSON.stringify({ ts: Date.now(), ...event })}\n`)
    progress?.(event)
  }
  if (opts.replay && !opts.quiet && !opts.stream) io.err(`tea: replaying model replies from ${opts.replay} (no model server is contacted)\n`)
  try {
    const agent = leanLoad(() => compileAgent(spec, registry))
    await store.updateRun(runId, { pid: process.pid })
    const outcome = await runAgent({ spec, agent, registry, llm, store, runId, dataDir, emit, signal: controller.signal }, start)
    await store.flush()
    const stateJson = `${JSON.stringify(outcome.state, null, 2)}\n`
    if (outcome.status === 'completed' || outcome.status === 'interrupted') {
      if (opts.output) writeFileSync(resolve(io.cwd, opts.output), stateJson)
      else if (!opts.stream) io.out(stateJson)
    }
    switch (outcome.status) {
      case 'completed':
        return EXIT.ok
      case 'interrupted':
        io.err(`tea: run ${runId} paused ${outcome.interrupt} node '${outcome.node}'. Continue with: tea resume ${runId}${dataDirHint(dataDir, io)}\n`)
        return EXIT.interrupted
      case 'cancelled':
        io.err(`tea: run ${runId} stopped; its last checkpoint is saved. Continue with: tea resume ${runId}${dataDirHint(dataDir, io)}\n`)
        return EXIT.signal
      case 'failed': {
        const e = outcome.error!
        io.err(`tea: run ${runId} failed: [${e.code}] ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}tea: the run is resumable once the cause is fixed: tea resume ${runId}${dataDirHint(dataDir, io)}\n`)
        return EXIT.failed
      }
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await llm.close()
    await store.close()
  }
}

function dataDirHint(dataDir: string, io: Io): string {
  return dataDir === resolve(io.cwd, io.env.TEA_DATA_DIR ?? '.tea') ? '' : ` --data-dir ${dataDir}`
}
