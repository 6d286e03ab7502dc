/**
 * `tea worker` (SPEC §3.10): an agent as an AOF/1 worker. Decisions (also in docs/aof.md, "Workers"):
 *
 * - Which task: the worker's own unfinished runs first (in-progress, leased to `--agent-id`, run still `running`:
 *   a restarted worker takes them up again), then `ready` tasks routed to it (`routing.agent`, else `routing.role`,
 *   else `routing.team`) whose `dependsOn` are done; oldest first. A lease another worker wins is skipped
 *   (src/aof/worker-claim.ts). An own run whose agent run is alive in another process (LMDB run record `running`
 *   with a live pid), or that has no agent run in this data dir at all, is left alone (`adoptable`); if two
 *   processes still meet on one agent run, the one that loses the engine's claim drops it without reporting.
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
 * - The task store: the data dir's folders, or NATS JetStream with `--nats URL` / `TEA_NATS_URL` (docs/fleet.md).
 *   Everything about tasks goes through the port (claim, lease, heartbeat, report); the agent's own checkpoints
 *   stay in the local LMDB of `--data-dir` either way. Only a run whose agent run this data dir's LMDB knows is
 *   taken up again (on NATS another board's run of the same agent id is that board's, or the scheduler's to
 *   reclaim; see `adoptable`), and on NATS a report that cannot reach the server is retried every
 *   `--interval-ms` until it does: the agent's work is done and checkpointed, and the server decides whether the run
 *   is still current (a run reclaimed meanwhile is refused as `stale_run`).
 */

import { resolve } from 'node:path'
import { requireAgentLoading } from '../agent/load.ts'
import { cliLoading } from './lean.ts'
import type { AgentSpec } from '../agent/types.ts'
import { startHeartbeat } from '../aof/index.ts'
import { routeOn } from '../aof/roles/router.ts'
import type { TaskStore } from '../aof/store/port.ts'
import { claimNextTask, type WorkerClaim } from '../aof/roles/worker-claim.ts'
import { reportCompletion } from '../aof/roles/worker-report.ts'
import { completionFromFailure, completionFromInterrupt, completionFromState } from '../aof/protocol/worker-completion.ts'
import type { CompletionPayload } from '../aof/protocol/worker-completion.ts'
import type { WorkerReport } from '../aof/protocol/worker-completion.ts'
import { workerRunId, workerTaskState } from '../aof/roles/worker-task-state.ts'
import { errorMessage, isTeaError, TeaError } from '../core/errors.ts'
import type { RunEvent } from '../core/events.ts'
import { cancelled } from '../core/signals.ts'
import { sleep } from '../core/util.ts'
import { storeOf } from './aof-store.ts'
import { continueRun, runningElsewhere, type RunServices } from '../engine/lifecycle.ts'
import type { RunOutcome } from '../engine/run.ts'
import { lazyRegistry } from '../catalog.ts'
import type { Store } from '../store/types.ts'
import { dataDirOf } from './data-dir.ts'
import { requireAgentPath } from './agent-path.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { progressPrinter } from './progress.ts'
import { modelClient, openStore } from './run-output.ts'
import { stopOnSignals } from './signals.ts'

interface Worker {
  io: Io
  /** Where the tasks are: the data dir's folders or a NATS server. */
  tasks: TaskStore
  intervalMs: number
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
  nats?: string
  'nats-creds'?: string
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
  const agentFile = resolve(io.cwd, flags.agent)
  requireAgentPath(flags.agent, io.cwd)
  const spec = await requireAgentLoading(agentFile, registry, undefined, cliLoading(agentFile))
  const llm = (await modelClient(io, flags))(spec)
  const dataDir = dataDirOf(flags['data-dir'], io)
  const store = await openStore(dataDir)
  let tasks: TaskStore
  try {
    tasks = await storeOf(flags, io)
  } catch (e) {
    await llm.close()
    await store.close()
    throw e
  }
  const stop = stopOnSignals(io, 'tea worker')
  const w: Worker = {
    io,
    tasks,
    intervalMs: flags['interval-ms'],
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
      // On NATS the agent's aof.* messages go to the server the worker claims from, not to the board's data dir.
      ...(tasks.kind === 'nats' && { aof: { route: (message: unknown) => routeOn(tasks, message) } }),
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
    await tasks.close()
  }
}

async function loop(w: Worker, once: boolean, intervalMs: number): Promise<number> {
  if (!once) w.io.err(`tea worker: ${w.agentId} polling ${w.tasks.where} every ${intervalMs} ms (Ctrl-C stops)\n`)
  while (!w.stop.aborted) {
    let claim: WorkerClaim | undefined
    try {
      claim = await claimNextTask(w.tasks, w.agentId, {
        leaseTtlMs: w.leaseTtlMs,
        heartbeatTtlMs: w.heartbeatTtlMs,
        canAdopt: (task, aofRunId) => !w.refused.has(task.id) && adoptable(w, workerRunId(task.id, aofRunId)),
      })
    } catch (e) {
      if (once) throw e
      w.io.err(`tea worker: cannot claim a task: ${errorMessage(e)}\n`)
    }
    if (!claim) {
      if (once) {
        w.io.err(`tea worker: no ready task routed to ${w.agentId} in ${w.tasks.where}\n`)
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
  let lostCheck: Promise<void> | undefined
  const heartbeat = startHeartbeat(w.tasks, {
    taskId: task.id,
    agentId: w.agentId,
    ttlMs: w.heartbeatTtlMs,
    onLost: (reason) => {
      // An agent that reported itself has moved its task on; that is not a lost run, and it may finish.
      lostCheck = w.tasks.readRun(task.id).then(
        (current) => {
          if (current?.runId === aofRunId && current.status === 'completed') return
          lost = reason
          run.abort(cancelled('the AOF run was lost'))
        },
        () => {
          lost = reason
          run.abort(cancelled('the AOF run was lost'))
        },
      )
    },
    onError: (e) => w.io.err(`tea worker: ${task.id}: heartbeat failed (will retry): ${errorMessage(e)}\n`),
  })
  let outcome: RunOutcome
  try {
    outcome = await runTaskAgent(w, claim, runId, run.signal)
  } catch (e) {
    // Another process of this agent id on this data dir started or took up the same agent run between our claim and
    // now: the run is that process's to finish and report, not a failure of ours.
    if (isTeaError(e, 'RUN_EXISTS') || (isTeaError(e, 'RUN_NOT_RESUMABLE') && e.details?.pid !== undefined)) lost ??= e.message
    const error = isTeaError(e) ? e : new TeaError('INTERNAL', errorMessage(e))
    outcome = { status: 'failed', state: {}, step: 0, error }
  } finally {
    w.stop.removeEventListener('abort', onStop)
    await heartbeat.stop()
    await lostCheck
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
  const report = await reportUntilReached(w, task.id, aofRunId, payload)
  const status = report.status ? { status: report.status } : {}
  if (report.kind === 'lost') {
    const why = report.reason ? `; the report was refused as ${report.reason}` : '; nothing reported'
    w.io.err(`tea worker: ${task.id}: the task left run ${aofRunId} (now ${report.status ?? 'gone'})${why}\n`)
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
  let inputs: Record<string, unknown>
  try {
    inputs = await whileServerAway(w, claim.task.id, 'read its handoff inputs', () => w.tasks.handoffInputs(claim.task))
  } catch (e) {
    // Stopped while the server was away: nothing ran; the task stays in progress for this run to be taken up again.
    if (w.stop.aborted && !isTeaError(e)) return { status: 'cancelled', state: {}, step: 0 }
    throw e
  }
  const input = workerTaskState(claim.task, w.agentId, inputs)
  // Two workers may adopt a dead worker's run at once: the first takes the agent run up, runs it to its end and
  // reports. The second then finds the run ended by a live process, which is that process's to report; continueRun
  // would hand it the ended run as if it were its own.
  const before = await w.store.getRun(runId)
  if (before && before.status !== 'running' && runningElsewhere({ ...before, status: 'running' }))
    throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} ended in another process (pid ${before.pid}), which reports it`, {
      details: { runId, pid: before.pid },
    })
  return continueRun(w.spec, { ...w.services, emit, signal }, { runId, input })
}

function reportUntilReached(w: Worker, taskId: string, aofRunId: string, payload: CompletionPayload): Promise<WorkerReport> {
  return whileServerAway(w, taskId, 'report', () => reportCompletion(w.tasks, { taskId, agentId: w.agentId, aofRunId }, payload))
}

/**
 * `fn`, tried again while the NATS server cannot be reached: a board keeps its work through a partition, reading a
 * task's inputs before its run and reporting after it once the server is back, never failing the task for the
 * outage. Errors of the protocol (TeaErrors) and any error on the folder store are not retried here: the caller's
 * loop takes the task up again.
 */
async function whileServerAway<T>(w: Worker, taskId: string, what: string, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await fn()
    } catch (e) {
      if (w.tasks.kind !== 'nats' || isTeaError(e) || w.stop.aborted) throw e
      w.io.err(`tea worker: ${taskId}: cannot ${what} yet (${errorMessage(e)}); retrying in ${w.intervalMs} ms\n`)
      await sleep(w.intervalMs, w.stop).catch(() => undefined)
    }
  }
}

/**
 * Whether an own unfinished run may be taken up here: only when this data dir's LMDB has its agent run, and the
 * process that last ran it is gone. A run without a record is not adopted: on NATS it may be another board's run of
 * the same agent id; on one data dir it may be a lease another process took a moment ago and has not started yet
 * (two processes would then both start it). If its worker died before starting it, the scheduler reclaims it.
 */
async function adoptable(w: Worker, runId: string): Promise<boolean> {
  const record = await w.store.getRun(runId)
  // Whatever its status: a run that completed in a live process is being reported by that process right now.
  return record !== undefined && !runningElsewhere({ ...record, status: 'running' })
}
