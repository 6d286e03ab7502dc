/**
 * The run lifecycle: the one way a run is started, resumed or continued. `tea run`, `tea resume`, `tea worker`,
 * the test harness, the benches and library users all come through here, so the rules live in one place:
 *
 * - start: the model client is made (a bad model is a usage error) and the id is checked before anything is
 *   written; then the run record, then the run.
 * - resume: the run must exist, not be completed, and not be running in a live process; the agent is loaded again
 *   from its file (an edited file is resumed with a warning, AGENT_CHANGED); edits to the state are written as a
 *   snapshot before the run goes on, so they survive a crash right after.
 * - one owner: a process takes a run by claiming it in one store transaction (`Store.claimRun`) that checks the
 *   recorded owner — its pid and start time, so a dead, zombie or reused pid does not count — and writes itself
 *   as the new one. Two resumes, two workers, or a daemon racing a person can never both proceed; the loser gets
 *   RUN_NOT_RESUMABLE naming the owner's pid. The claim dies with the process: nothing to release after a crash.
 * - continue (workers, daemons): start when new, resume when unfinished, and report a run that already ended —
 *   completed, or paused at an interrupt — as it ended, without running anything.
 *
 * A `--model` override makes a new spec; the loaded one is never edited. Signals are the caller's business: it
 * passes an AbortSignal, and the run stops after its current checkpoint when that fires.
 */

import { appendFileSync } from 'node:fs'
import { actionStore, type ContextServices } from '../actions/context.ts'
import type { Registry } from '../actions/registry.ts'
import type { AofRouter } from '../actions/types.ts'
import type { AgentSpec } from '../agent/types.ts'
import { TeaError } from '../core/errors.ts'
import type { RunEvent } from '../core/events.ts'
import { processAlive, selfIdentity, type ProcessIdentity } from '../core/process.ts'
import type { State } from '../core/util.ts'
import { parseModelSpec } from '../llm/model-spec.ts'
import type { LlmClient } from '../llm/types.ts'
import type { RunRecord, Store } from '../store/types.ts'
import { compileAgent, type CompiledAgent } from './compile.ts'
import { nodeRunner } from './execute.ts'
import { runAgent, type RunOutcome, type RunStart } from './run.ts'
import type { Runtime } from './runtime.ts'

export interface RunServices {
  store: Store
  registry: Registry
  /**
   * The run's model client: a client the caller owns (and closes), or a factory given the agent as it will run
   * (after any model override); a client made by the factory is closed when the run ends.
   */
  llm: LlmClient | ((spec: AgentSpec) => LlmClient)
  /** The data dir, for actions that keep files beside the store (AOF). */
  dataDir?: string
  /** Where `aof.*` actions send their messages when not to the data dir (actions/types.ts `AofRouter`). */
  aof?: AofRouter
  emit?(event: RunEvent): void
  /** When it fires, the run stops after its current checkpoint (status `cancelled`). */
  signal?: AbortSignal
  /**
   * The model every call of the run goes to (tea's `provider:model` form, validated before anything is written):
   * overrides settings.llm.model and each node's own model and provider.
   */
  model?: string
  /** Told about what does not stop the run (AGENT_CHANGED). */
  warn?(warning: TeaError): void
}

export interface RunResult extends RunOutcome {
  runId: string
  /** The agent as it ran (after any model override). */
  spec: AgentSpec
}

/** Starts a new run of `agent` with `input` over its initial state. RUN_EXISTS when the id is taken. */
export async function startRun(agent: AgentSpec, services: RunServices, opts: { runId: string; input?: State }): Promise<RunResult> {
  const spec = withModel(agent, services.model)
  const llm = clientFor(spec, services)
  try {
    const existing = await services.store.getRun(opts.runId)
    if (existing) {
      throw new TeaError('RUN_EXISTS', `run ${opts.runId} already exists (${existing.status})`, {
        hint:
          existing.status === 'completed'
            ? 'choose another run id, or remove it with tea runs prune'
            : `continue it with: tea resume ${opts.runId}`,
        details: { runId: opts.runId, status: existing.status },
      })
    }
    const start = await createRunRecord(
      services.store,
      opts.runId,
      spec,
      await withSession(spec, services.store, firstStart(spec, opts.input)),
    )
    return await execute(spec, llm.client, services, opts.runId, start)
  } finally {
    await llm.release()
  }
}

export interface ResumeOptions {
  runId: string
  /** Keys merged into the saved state first (a human's answer at an interrupt). */
  edits?: State
  /**
   * Loads the agent file the run was started from (throws AGENT_INVALID when it no longer loads), with the `run:`
   * languages the run started with (LoadOptions.runLanguages).
   */
  load(path: string, runLanguages?: Readonly<Record<string, string>>): AgentSpec | Promise<AgentSpec>
}

/** Resumes a failed, interrupted, cancelled or killed run from its latest checkpoint. */
export async function resumeRun(services: RunServices, opts: ResumeOptions): Promise<RunResult> {
  const { store } = services
  const { runId } = opts
  // Checked here so that a bad run id is told before the agent is loaded; checked again, atomically, by the claim.
  const run = resumable(await store.getRun(runId), runId)
  const spec = withModel(await opts.load(run.agentPath, run.runLanguages), services.model)
  const llm = clientFor(spec, services)
  try {
    const claimed = await claim(store, runId)
    return await resumeLoaded(spec, llm.client, services, claimed, opts.edits)
  } finally {
    await llm.release()
  }
}

/**
 * Continues the run `runId` of `agent`, whatever its state: starts it with `input` when it does not exist (or has no
 * checkpoint yet), resumes it when unfinished, and returns a completed or interrupted run as it ended.
 */
export async function continueRun(agent: AgentSpec, services: RunServices, opts: { runId: string; input?: State }): Promise<RunResult> {
  const { store } = services
  const spec = withModel(agent, services.model)
  const existing = await store.getRun(opts.runId)
  const checkpoint = existing ? await store.loadLatest(opts.runId) : undefined
  if (existing && checkpoint) {
    const ended = { runId: opts.runId, spec, state: checkpoint.state, step: checkpoint.step }
    if (existing.status === 'completed') return { ...ended, status: 'completed' }
    if (existing.status === 'interrupted') {
      const before = checkpoint.cursor.skipInterruptBefore === true
      const node = before ? checkpoint.cursor.next : (existing.node ?? checkpoint.cursor.next)
      return { ...ended, status: 'interrupted', node, interrupt: before ? 'before' : 'after' }
    }
    resumable(existing, opts.runId)
  }
  const llm = clientFor(spec, services)
  try {
    if (existing && checkpoint) return await resumeLoaded(spec, llm.client, services, await claim(store, opts.runId))
    const first = await withSession(spec, store, firstStart(spec, opts.input))
    const start = existing ? first : await createRunRecord(store, opts.runId, spec, first)
    return await execute(spec, llm.client, services, opts.runId, start)
  } finally {
    await llm.release()
  }
}

/** A run marked running whose process is alive and is not this one: resuming it would run it twice. */
export function runningElsewhere(run: RunRecord, me: ProcessIdentity = selfIdentity()): boolean {
  if (run.status !== 'running' || run.pid === undefined) return false
  if (run.pid === me.pid && (run.pidStart === undefined || run.pidStart === me.startTicks)) return false
  return processAlive(run.pid, run.pidStart)
}

/** The run if it may be resumed by this process; RUN_NOT_FOUND or RUN_NOT_RESUMABLE otherwise. */
function resumable(run: RunRecord | undefined, runId: string, me?: ProcessIdentity): RunRecord {
  if (!run) throw new TeaError('RUN_NOT_FOUND', `no run ${runId}`, { details: { runId } })
  if (run.status === 'completed')
    throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} already completed`, { details: { runId, status: run.status } })
  if (runningElsewhere(run, me)) {
    throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} is running in another process (pid ${run.pid})`, {
      details: { runId, pid: run.pid },
      hint: `stop that process first (kill ${run.pid}); it stops after its current checkpoint`,
    })
  }
  return run
}

/** Takes the run for this process in one store transaction (see the header). */
function claim(store: Store, runId: string): Promise<RunRecord> {
  const me = selfIdentity()
  return store.claimRun(runId, (current) => ({
    ...resumable(current, runId, me),
    status: 'running',
    pid: me.pid,
    ...(me.startTicks !== undefined && { pidStart: me.startTicks }),
    updatedAt: Date.now(),
  }))
}

async function resumeLoaded(spec: AgentSpec, llm: LlmClient, services: RunServices, run: RunRecord, edits: State = {}): Promise<RunResult> {
  const { store } = services
  const checkpoint = await store.loadLatest(run.id)
  if (!checkpoint) throw new TeaError('RUN_NOT_RESUMABLE', `run ${run.id} has no checkpoint to resume from`, { details: { runId: run.id } })
  if (spec.hash !== run.agentHash) {
    services.warn?.(
      new TeaError('AGENT_CHANGED', `${run.agentPath} changed since run ${run.id} started; resuming with the current file`, {
        details: { runId: run.id, file: run.agentPath },
      }),
    )
  }
  const state = { ...checkpoint.state, ...edits }
  if (Object.keys(edits).length)
    await store.snapshot(
      run.id,
      { step: checkpoint.step, node: checkpoint.node, state, cursor: checkpoint.cursor },
      spec.settings.checkpoint_keep,
    )
  return execute(spec, llm, services, run.id, { state, cursor: checkpoint.cursor, step: checkpoint.step, resumed: true })
}

/**
 * Compiled agents by spec and registry. A compiled agent holds no run state, so a process that starts many runs
 * of one loaded agent (`tea worker`, `tea serve`, library use) wires its nodes once (~4 µs a node), not per run.
 */
const compiledAgents = new WeakMap<AgentSpec, WeakMap<Registry, CompiledAgent>>()

function compiledAgent(spec: AgentSpec, registry: Registry): CompiledAgent {
  let byRegistry = compiledAgents.get(spec)
  if (!byRegistry) compiledAgents.set(spec, (byRegistry = new WeakMap()))
  let agent = byRegistry.get(registry)
  if (!agent) byRegistry.set(registry, (agent = compileAgent(spec, registry)))
  return agent
}

async function execute(spec: AgentSpec, llm: LlmClient, services: RunServices, runId: string, start: RunStart): Promise<RunResult> {
  const { store, registry } = services
  const agent = compiledAgent(spec, registry)
  const emit = traced(spec, services.emit ?? (() => {}))
  const context: ContextServices = {
    runId,
    variables: spec.variables,
    settings: spec.settings,
    llm,
    store: actionStore(store),
    emit,
    registry,
  }
  if (services.dataDir !== undefined) context.dataDir = services.dataDir
  if (services.aof !== undefined) context.aof = services.aof
  const caller = services.signal ?? new AbortController().signal
  // config.max_execution_time bounds the run from here (a resumed run gets the whole time again, as with max_steps).
  const deadline =
    spec.maxExecutionMs === undefined ? undefined : { signal: AbortSignal.timeout(spec.maxExecutionMs), ms: spec.maxExecutionMs }
  const signal = deadline ? AbortSignal.any([caller, deadline.signal]) : caller
  const rt: Runtime = { spec, agent, services: context, store, runId, emit, signal, ...(deadline && { deadline }) }
  context.runNode = nodeRunner(rt)
  const outcome = await runAgent(rt, start)
  if (outcome.status === 'completed' && spec.settings.sections.session) {
    const { autoSaveSession } = await import('../actions/session/auto.ts')
    await autoSaveSession(spec.settings, context.store, outcome.state)
  }
  await store.flush()
  return { ...outcome, runId, spec }
}

/**
 * TEA's session around a run (actions/session/auto.ts): with `settings.session`, a starting state with a
 * `session_id` goes over that session's saved data. The module is loaded only for an agent that has sessions.
 */
async function withSession(spec: AgentSpec, store: RunServices['store'], start: RunStart): Promise<RunStart> {
  if (!spec.settings.sections.session) return start
  const { injectSession } = await import('../actions/session/auto.ts')
  return { ...start, state: await injectSession(spec.settings, actionStore(store), start.state) }
}

/** Where a new run starts: the agent's initial state with the input over it, at its entry node. */
function firstStart(spec: AgentSpec, input: State | undefined): RunStart {
  return { state: { ...spec.initialState, ...input }, cursor: { next: spec.entry }, step: 0, resumed: false }
}

/**
 * The record of a new run, owned by this process (createRun refuses an id that exists, atomically), with its first
 * snapshot (at `start`) in the same commit; returns `start` marked so that the run loop does not write them again.
 */
async function createRunRecord(store: Store, runId: string, spec: AgentSpec, start: RunStart): Promise<RunStart> {
  const now = Date.now()
  const me = selfIdentity()
  const first = { step: start.step, node: null, state: start.state, cursor: start.cursor }
  await store.createRun(
    {
      id: runId,
      agent: spec.name,
      agentPath: spec.file,
      agentHash: spec.hash,
      ...(chosen(spec) && { runLanguages: chosen(spec) }),
      status: 'running',
      node: null,
      step: 0,
      createdAt: now,
      updatedAt: now,
      pid: me.pid,
      ...(me.startTicks !== undefined && { pidStart: me.startTicks }),
    },
    first,
  )
  return { ...start, recorded: true }
}

/** The languages of the agent's `run:` bodies that name none, by body; undefined when there are none. */
function chosen(spec: AgentSpec): Record<string, string> | undefined {
  const choices = (spec.runLanguages ?? []).filter((c) => c.reason !== 'named')
  return choices.length ? Object.fromEntries(choices.map((c) => [c.key, c.language])) : undefined
}

/** The agent with `model` as its default model; the loaded spec is left as it was. */
function withModel(spec: AgentSpec, model: string | undefined): AgentSpec {
  if (!model) return spec
  parseModelSpec(model)
  const { provider: _named, ...llm } = spec.settings.llm
  return { ...spec, settings: { ...spec.settings, llm: { ...llm, model } } }
}

/**
 * The run's model client. With a model override, every call goes to that model, whatever its node names: TEA
 * agents name a model (often a cloud one) on every node, and `--model ollama:<name>` must point all of them at the
 * local server.
 */
function clientFor(spec: AgentSpec, services: RunServices): { client: LlmClient; release(): Promise<void> } {
  const owned = typeof services.llm === 'function'
  const client = typeof services.llm === 'function' ? services.llm(spec) : services.llm
  const model = services.model
  // Embeddings keep their own model: an override names a chat model.
  const routed: LlmClient = model
    ? {
        call: (request) => client.call({ ...request, model, provider: undefined }),
        ...(client.embed && { embed: client.embed.bind(client) }),
        close: () => client.close(),
      }
    : client
  return { client: routed, release: owned ? () => client.close() : async () => {} }
}

/**
 * The run's events, also appended to the agent's trace file when it asks for one (TEA's `auto_trace` with
 * `trace_exporter: file`): one JSON line per event with its time, as `tea run --trace` writes them.
 */
function traced(spec: AgentSpec, emit: (event: RunEvent) => void): (event: RunEvent) => void {
  const file = spec.traceFile
  if (!file) return emit
  return (event) => {
    appendFileSync(file, `${JSON.stringify({ ts: Date.now(), ...event })}\n`)
    emit(event)
  }
}
