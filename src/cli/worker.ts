/**
 * `tea worker` (SPEC §3.10): an agent as an AOF/1 worker. Decisions (also in docs/aof.md, "Workers"):
 *
 * - Which task: the worker's own unfinished runs first (in-progress, leased to `--agent-id`, run still `running`:
 *   a restarted worker takes them up again), then `ready` tasks routed to it (`routing.agent`, else `routing.role`,
 *   else `routing.team`) whose `dependsOn` are done; oldest first. A lease another worker wins is skipped
 *   (src/aof/worker-claim.ts). An own run whose agent run is alive in another process (LMDB run record `running`
 *   with a live pid) is left to that process.
 * - The agent run: id `aof-<TASK-ID>-<AOF run id>`. It does not exist → a fresh run whose initial state is the
 *   agent's `initial_state` with `{task: {id, title, body, inputs, metadata}, agent_id}` over it
 *   (src/aof/worker-task-state.ts). It exists → resumed from its latest checkpoint (nodes already recorded do not
 *   run again); one that had completed or paused (the worker died before reporting) is reported, not re-run. A task the
 *   scheduler reclaimed gets a new AOF run on its next lease, so it starts fresh.
 * - While the agent runs, `startHeartbeat` keeps `run_heartbeat.json` fresh (and the lease extended). If the run is
 *   lost (reclaimed, re-leased) the agent is stopped after its current checkpoint and nothing is reported.
 * - The end: a `completion.report` from `--agent-id`, checked under the task lock to be for this AOF run
 *   (src/aof/worker-report.ts). The outcome comes from the final state's `outcome` key (default `done`); a failed run
 *   reports `blocked` with the error; a run paused at an interrupt reports `needs_review`
 *   (src/aof/worker-completion.ts). An agent that reported itself (`aof.report`) is not reported again.
 * - Output: progress on stderr, a start and an end line per task (`-v` adds a line per node); on stdout one JSON
 *   line per task: `{"taskId","runId","outcome","status"}`, `outcome` being the reported outcome, `lost` or
 *   `stopped` (`reason` when the report was rejected).
 * - `--once`: at most one task, then exit 0 (also when there is none); 1 when the report was rejected.
 *   Otherwise poll every `--interval-ms` (default 2000) until SIGINT/SIGTERM, which stops the agent after its
 *   current checkpoint, stops the heartbeat and exits 130, leaving the task in progress for a restarted worker or
 *   the scheduler's stale-heartbeat recovery. A second signal exits at once.
 */

import { resolve } from 'node:path'
import { requireAgentLoading } from '../agent/load.ts'
import type { AgentSpec } from '../agent/types.ts'
import { type AofContext, aofContext, readRun, startHeartbeat } from '../aof/index.ts'
import { claimNextTask, type WorkerClaim } from '../aof/worker-claim.ts'
import { completionFromFailure, completionFromInterrupt, completionFromState } from '../aof/worker-completion.ts'
import { reportCompletion } from '../aof/worker-report.ts'
import { workerRunId, workerTaskState } from '../aof/worker-task-state.ts'
import { errorMessage, isTeaError, TeaError } from '../core/errors.ts'
import type { RunEvent } from '../core/events.ts'
import { cancelled } from '../core/signals.ts'
import { sleep } from '../core/util.ts'
import { continueRun, runningElsewhere, type RunServices } from '../engine/lifecycle.ts'
import type { RunOutcome } from '../engine/run.ts'
import { lazyRegistry } from '../catalog.ts'
import type { Store } from '../store/types.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { progressPrinter } from './progress.ts'
import { modelClient, openStore } from './run-output.ts'
import { stopOnSignals } from './signals.ts'

interface Worker {
  io: Io
  ctx: AofContext
  agentId: string
  spec: AgentSpec
  /** The engine's services for every task's run (store, registry, model client, model override). */
  services: RunServices
  store: Store
  dataDir: string
  leaseTtlMs: number
  heartbeatTtlMs: number
  verbose: boolean
  /** Aborted by SIGINT/SIGTERM. */
  stop: AbortSignal
  /** Tasks whose report was refused in this process: not taken up again, or the worker would loop on them. */
  refused: Set<string>
}

interface TaskLine {
  taskId: string
  runId: string
  outcome: string
  status?: string
  reason?: string
}

interface WorkerFlags {
  'agent-id': string
  agent: string
  'data-dir'?: string
  once: boolean
  'interval-ms': number
  'lease-ttl-ms': number
  'heartbeat-ttl-ms': number
  model?: string
  replay?: string
  verbose: boolean
}

export async function workerCommand({ flags }: { flags: WorkerFlags }, io: Io): Promise<number> {
  const agentId = flags['agent-id']
  const registry = lazyRegistry() // the actions the agent names (src/catalog.ts)
  const spec = await requireAgentLoading(resolve(io.cwd, flags.agent), registry)
  const llm = (await modelClient(io, flags))(spec)
  const dataDir = dataDirOf(flags['data-dir'], io)
  const store = await openStore(dataDir)
  const stop = stopOnSignals(io, 'tea worker')
  const w: Worker = {
    io,
    ctx: aofContext(dataDir),
    agentId,
    spec,
    store,
    dataDir,
    services: {
      store,
      registry,
      llm,
      dataDir,
      ...(flags.model && { model: flags.model }),
      warn: (e) => io.err(`tea worker: warning: ${e.message}\n`),
    },
    leaseTtlMs: flags['lease-ttl-ms'],
    heartbeatTtlMs: flags['heartbeat-ttl-ms'],
    verbose: flags.verbose,
    stop: stop.signal,
    refused: new Set(),
  }
  try {
    return await loop(w, flags.once, flags['interval-ms'])
  } finally {
    stop.dispose()
    await llm.close()
    await store.close()
  }
}

async function loop(w: Worker, once: boolean, intervalMs: number): Promise<number> {
  if (!once) w.io.err(`tea worker: ${w.agentId} polling ${w.dataDir} every ${intervalMs} ms (Ctrl-C stops)\n`)
  while (!w.stop.aborted) {
    let claim: WorkerClaim | undefined
    try {
      claim = await claimNextTask(w.ctx, w.agentId, {
        leaseTtlMs: w.leaseTtlMs,
        heartbeatTtlMs: w.heartbeatTtlMs,
        canAdopt: (task, aofRunId) => !w.refused.has(task.id) && notRunningElsewhere(w.store, workerRunId(task.id, aofRunId)),
      })
    } catch (e) {
      if (once) throw e
      w.io.err(`tea worker: cannot claim a task: ${errorMessage(e)}\n`)
    }
    if (!claim) {
      if (once) {
        w.io.err(`tea worker: no ready task routed to ${w.agentId} in ${w.dataDir}\n`)
        return EXIT.ok
      }
      await sleep(intervalMs, w.stop).catch(() => undefined)
      continue
    }
    let line: TaskLine
    try {
      line = await processTask(w, claim)
    } catch (e) {
      // E.g. the task lock timed out while reporting. The task stays in progress in our run, so the next round
      // adopts it again and, its agent run having ended, only reports.
      if (once) throw e
      w.io.err(`tea worker: ${claim.task.id}: ${errorMessage(e)}; retrying in ${intervalMs} ms\n`)
      await sleep(intervalMs, w.stop).catch(() => undefined)
      continue
    }
    w.io.out(`${JSON.stringify(line)}\n`)
    if (line.outcome === 'stopped') return EXIT.signal
    if (line.reason) w.refused.add(line.taskId)
    if (once) return line.reason ? EXIT.failed : EXIT.ok
  }
  return EXIT.signal
}

async function processTask(w: Worker, claim: WorkerClaim): Promise<TaskLine> {
  const { task, aofRunId } = claim
  const runId = workerRunId(task.id, aofRunId)
  w.io.err(`tea worker: ${task.id} ${JSON.stringify(task.data.title)}: ${claim.adopted ? 'resuming' : 'starting'} run ${runId}\n`)
  const run = new AbortController()
  const onStop = (): void => run.abort(w.stop.reason)
  w.stop.addEventListener('abort', onStop, { once: true })
  let lost: string | undefined
  const heartbeat = startHeartbeat(w.ctx, {
    taskId: task.id,
    agentId: w.agentId,
    ttlMs: w.heartbeatTtlMs,
    onLost: (reason) => {
      // An agent that reported itself has moved its task on; that is not a lost run, and it may finish.
      const current = readRun(w.ctx, task.id)
      if (current?.runId === aofRunId && current.status === 'completed') return
      lost = reason
      run.abort(cancelled('the AOF run was lost'))
    },
    onError: (e) => w.io.err(`tea worker: ${task.id}: heartbeat failed (will retry): ${errorMessage(e)}\n`),
  })
  let outcome: RunOutcome
  try {
    outcome = await runTaskAgent(w, claim, runId, run.signal)
  } catch (e) {
    const error = isTeaError(e) ? e : new TeaError('INTERNAL', errorMessage(e))
    outcome = { status: 'failed', state: {}, step: 0, error }
  } finally {
    w.stop.removeEventListener('abort', onStop)
    await heartbeat.stop()
  }
  const line = (outcomeName: string, extra: Partial<TaskLine> = {}): TaskLine => ({
    taskId: task.id,
    runId,
    outcome: outcomeName,
    ...extra,
  })
  if (lost !== undefined) {
    w.io.err(`tea worker: ${task.id}: run lost (${lost}); nothing reported\n`)
    return line('lost')
  }
  if (outcome.status === 'cancelled') {
    w.io.err(`tea worker: ${task.id}: stopped; run ${runId} is checkpointed and the task stays in progress\n`)
    return line('stopped', { status: 'in-progress' })
  }
  const payload =
    outcome.status === 'completed'
      ? completionFromState(outcome.state)
      : outcome.status === 'interrupted'
        ? completionFromInterrupt(runId, outcome.node ?? '?', outcome.interrupt ?? 'before')
        : completionFromFailure(runId, {
            code: outcome.error?.code ?? 'INTERNAL',
            message: outcome.error?.message ?? 'unknown error',
            node: outcome.node,
          })
  const report = await reportCompletion(w.ctx, { taskId: task.id, agentId: w.agentId, aofRunId }, payload)
  const status = report.status ? { status: report.status } : {}
  if (report.kind === 'lost') {
    w.io.err(`tea worker: ${task.id}: the task left run ${aofRunId} (now ${report.status ?? 'gone'}); nothing reported\n`)
    return line('lost', status)
  }
  if (report.kind === 'sent' && report.route.outcome !== 'accepted') {
    w.io.err(`tea worker: ${task.id}: completion.report ${payload.outcome} refused: ${report.route.reason ?? 'unknown'}\n`)
    return line(report.outcome, { ...status, reason: report.route.reason ?? 'rejected' })
  }
  const by = report.kind === 'agent' ? ' (reported by the agent)' : ''
  w.io.err(`tea worker: ${task.id}: ${report.outcome}${by} → ${report.status ?? '?'}\n`)
  return line(report.outcome, status)
}

/** Starts the task's agent run, or resumes it from its checkpoint; an already ended run is returned as it ended. */
async function runTaskAgent(w: Worker, claim: WorkerClaim, runId: string, signal: AbortSignal): Promise<RunOutcome> {
  const progress = w.verbose ? progressPrinter(w.io) : undefined
  const emit = (event: RunEvent): void => progress?.(event)
  const input = workerTaskState(w.ctx, claim.task, w.agentId)
  return continueRun(w.spec, { ...w.services, emit, signal }, { runId, input })
}

async function notRunningElsewhere(store: Store, runId: string): Promise<boolean> {
  const record = await store.getRun(runId)
  return !(record && runningElsewhere(record))
}
