/**
 * The runs of one `tea serve`: started from the API (or a schedule), queued behind `--max-concurrent`, refused
 * when free memory is below `--min-free-mb` (the board also hosts the model), stopped on cancel or shutdown, and
 * at start the runs a power cut or a shutdown left unfinished are resumed — a run whose process died too often in
 * a row is failed instead (auto-resume.ts).
 *
 * Every run goes through the engine's one lifecycle (engine/lifecycle.ts), so the rules of `tea run`/`tea resume`
 * hold here too: one owner per run (a person's `tea resume` and the daemon cannot both proceed), completed nodes
 * never run again. A queued run exists in memory only until it starts: a daemon killed meanwhile never started it,
 * and its client got a `queued` status, not a run record.
 */

import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { freemem } from 'node:os'
import { join } from 'node:path'
import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import type { AgentSpec } from '../../agent/types.ts'
import { errorMessage, isTeaError, TeaError } from '../../core/errors.ts'
import type { RunEvent } from '../../core/events.ts'
import { parseJson } from '../../core/json.ts'
import { cancelled } from '../../core/signals.ts'
import type { State } from '../../core/util.ts'
import { resumeRun, runningElsewhere, startRun, type RunResult, type RunServices } from '../../engine/lifecycle.ts'
import type { Store } from '../../store/types.ts'
import type { Io } from '../io.ts'
import { modelClient } from '../run-output.ts'
import { sharedCallScheduler } from '../../llm/call-scheduler.ts'
import { clearAutoResume, deathsInARow, failResumeLimit, markAutoResume } from './auto-resume.ts'
import { EventFeed } from './event-feed.ts'
import { ServeMetrics } from './metrics.ts'
import { pauseNotifier, type NotifySettings, type PauseNotifier } from './notify.ts'

export interface ManagerOptions {
  store: Store
  registry: Registry
  dataDir: string
  io: Io
  maxConcurrent: number
  /** A run is refused (LOW_MEMORY) when the memory available is below this. 0: no guard. */
  minFreeBytes: number
  /** Memory available to a new run, in bytes (tests pass their own). */
  freeMemory?: () => number
  /** Automatic resumes in a row of a run whose process died, before it is failed with RESUME_LIMIT. */
  resumeLimit: number
  log(line: string): void
  /**
   * Settings sections an agent gets when it has none of its own: the serve config's MQTT broker for
   * `mqtt.publish` (`mqtt`).
   */
  sections?: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  /** Called once a run this process ran has ended, whatever the outcome (the MQTT triggers and Home Assistant). */
  onEnded?(runId: string, agent: string, status: Ended): void
  /** A cassette (absolute path) every run's model calls are answered from (`tea serve --replay`): no model server. */
  replay?: string
  /** The serve config's webhook, told when a run pauses at an interrupt (notify.ts). */
  notify?: NotifySettings
}

type Job =
  | { kind: 'start'; runId: string; agent: string; spec: AgentSpec; input: State; feed: EventFeed; controller: AbortController }
  | {
      kind: 'resume'
      runId: string
      agent: string
      edits: State
      feed: EventFeed
      controller: AbortController
      /** Set when tea serve resumes the run by itself: the attempt recorded before it starts (auto-resume.ts). */
      auto?: { deaths: number; step: number }
    }

/** How a run ended in this process: its status, or `error` when it could not run at all. */
export type Ended = RunResult['status'] | 'error'

/** Feeds of ended runs kept for late SSE clients. */
const ENDED_FEEDS = 50
/** Failures after which this process's store is not trusted again (see `storeFailure`). */
const STORE_FAILURES = new Set(['STORE_FULL', 'STORE_ERROR', 'STORE_CORRUPT'])
/** Runs a shutdown stopped, to be resumed by the next start. */
const STOPPED_FILE = 'serve-stopped.json'
/**
 * Runs whose error hint and last written keys are kept for the page (the run record keeps an error's code and
 * message only, and no update).
 */
const REMEMBERED = 200

export class RunManager {
  private readonly queue: Job[] = []
  private readonly active = new Map<string, { job: Job; done: Promise<Ended> }>()
  private readonly feeds = new Map<string, EventFeed>()
  private stopping = false
  /**
   * Set when a run failed because the store could not write (a full disk): lmdb's environment is not reliable in
   * this process after a failed commit (a later write may abort the process), so no run starts again until tea
   * serve restarts. Nothing is lost: every committed checkpoint stays, and the failed run resumes after the restart.
   */
  private storeFailure: string | undefined
  /** What `GET /metrics` reports (metrics.ts). */
  readonly metrics = new ServeMetrics()
  private readonly unobserve: () => void
  private readonly notifier: PauseNotifier | undefined
  private readonly hints = new Map<string, string>()
  /** The keys each run's last node wrote, for what a run paused after it asks for (agent-view.ts). */
  private readonly wrote = new Map<string, { node: string; keys: string[] }>()

  constructor(private readonly opts: ManagerOptions) {
    this.unobserve = this.metrics.observeScheduler(sharedCallScheduler)
    this.notifier =
      opts.notify &&
      pauseNotifier(opts.notify, { store: opts.store, registry: opts.registry, log: opts.log, lastWrite: (id) => this.wrote.get(id) })
  }

  /** The address the API listens on, for the links of notifications. */
  listening(url: string): void {
    this.notifier?.listening(url)
  }

  /** The node a run of this process ran last and the state keys it wrote. */
  lastWrite(runId: string): { node: string; keys: string[] } | undefined {
    return this.wrote.get(runId)
  }

  /** The hint of the error a run of this process failed with, when it had one. */
  hintOf(runId: string): string | undefined {
    return this.hints.get(runId)
  }

  /** Queues a new run of `spec`; it starts at once when a slot is free. */
  async start(spec: AgentSpec, runId: string, input: State = {}): Promise<{ run_id: string; status: 'running' | 'queued' }> {
    this.guardMemory()
    if (this.known(runId) || (await this.opts.store.getRun(runId)))
      throw new TeaError('RUN_EXISTS', `run ${runId} already exists`, { details: { runId } })
    return this.enqueue({
      kind: 'start',
      runId,
      agent: spec.name,
      spec,
      input,
      feed: this.feedFor(runId),
      controller: new AbortController(),
    })
  }

  /**
   * Queues a resume of a failed, interrupted or cancelled run, with `edits` merged into its state. `auto`: tea serve
   * resumes it by itself (no memory guard; the attempt is counted).
   */
  async resume(
    runId: string,
    edits: State = {},
    auto?: { deaths: number; step: number },
  ): Promise<{ run_id: string; status: 'running' | 'queued' }> {
    const run = await this.opts.store.getRun(runId)
    if (!run) throw new TeaError('RUN_NOT_FOUND', `no run ${runId}`, { details: { runId } })
    if (this.known(runId)) throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} is already running or queued here`, { details: { runId } })
    if (run.status === 'completed') throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} already completed`, { details: { runId } })
    if (runningElsewhere(run))
      throw new TeaError('RUN_NOT_RESUMABLE', `run ${runId} is running in another process (pid ${run.pid})`, {
        details: { runId, pid: run.pid },
      })
    if (!auto) this.guardMemory()
    return this.enqueue({
      kind: 'resume',
      runId,
      agent: run.agent,
      edits,
      feed: this.feedFor(runId),
      controller: new AbortController(),
      ...(auto && { auto }),
    })
  }

  /** Stops a running run after its current checkpoint, or drops a queued one. RUN_NOT_ACTIVE otherwise. */
  cancel(runId: string): void {
    const queued = this.queue.findIndex((j) => j.runId === runId)
    if (queued >= 0) {
      const [job] = this.queue.splice(queued, 1)
      job!.feed.end()
      return
    }
    const active = this.active.get(runId)
    if (!active) throw new TeaError('RUN_NOT_ACTIVE', `run ${runId} is not running in this tea serve`, { details: { runId } })
    active.job.controller.abort(cancelled('cancelled by the API'))
  }

  /** `queued`/`running` for a run this process holds, else undefined (the store knows the rest). */
  liveStatus(runId: string): 'queued' | 'running' | undefined {
    if (this.active.has(runId)) return 'running'
    return this.queue.some((j) => j.runId === runId) ? 'queued' : undefined
  }

  queued(): Array<{ run_id: string; agent: string }> {
    return this.queue.map((j) => ({ run_id: j.runId, agent: j.agent }))
  }

  /** The feed of a run this process ran or runs; undefined for others. */
  feed(runId: string): EventFeed | undefined {
    return this.feeds.get(runId)
  }

  get counts(): { active: number; queued: number } {
    return { active: this.active.size, queued: this.queue.length }
  }

  /**
   * Resumes the runs left unfinished: those a shutdown stopped (listed in serve-stopped.json) and those still
   * marked `running` whose process is gone (a power cut, SIGKILL, OOM). A run whose process has died more than
   * `resumeLimit` times in a row is failed with RESUME_LIMIT instead. Returns the ids resumed.
   */
  async resumeLeftovers(): Promise<string[]> {
    const stoppedFile = join(this.opts.dataDir, STOPPED_FILE)
    const stopped = new Set<string>(existsSync(stoppedFile) ? readStopped(stoppedFile) : [])
    const ids: string[] = []
    for (const run of await this.opts.store.listRuns()) {
      const crashed = run.status === 'running' && !runningElsewhere(run)
      if (!crashed && !(run.status === 'cancelled' && stopped.has(run.id))) continue
      try {
        const checkpoint = await this.opts.store.loadLatest(run.id)
        const step = checkpoint?.step ?? 0
        const deaths = deathsInARow(run, step, crashed)
        if (deaths > this.opts.resumeLimit) {
          const failed = await failResumeLimit(this.opts.store, run, deaths, this.opts.resumeLimit, checkpoint?.cursor.next)
          this.opts.log(`run ${run.id} not resumed: [RESUME_LIMIT] ${failed.error?.message}`)
          continue
        }
        await this.resume(run.id, {}, { deaths, step })
        ids.push(run.id)
      } catch (e) {
        this.opts.log(`cannot resume ${run.id}: ${isTeaError(e) ? `${e.code}: ${errorMessage(e)}` : String(e)}`)
      }
    }
    rmSync(stoppedFile, { force: true })
    return ids
  }

  /**
   * Graceful stop: queued runs are dropped (they never started), running ones stop after their current
   * checkpoint and are written down to be resumed by the next start. Resolves when every run has stopped.
   */
  async shutdown(): Promise<string[]> {
    this.stopping = true
    for (const job of this.queue.splice(0)) job.feed.end()
    const running = [...this.active.values()]
    for (const { job } of running) job.controller.abort(cancelled('tea serve is stopping'))
    const ends = await Promise.all(running.map((r) => r.done))
    const stopped = running.filter((_, i) => ends[i] === 'cancelled').map((r) => r.job.runId)
    if (stopped.length) writeFileSync(join(this.opts.dataDir, STOPPED_FILE), JSON.stringify(stopped))
    this.unobserve()
    return stopped
  }

  // --- internal ---

  private known(runId: string): boolean {
    return this.liveStatus(runId) !== undefined
  }

  /** `spec` with the daemon's default settings sections where it has none of its own. */
  private withSections(spec: AgentSpec): AgentSpec {
    const defaults = this.opts.sections
    if (!defaults || Object.keys(defaults).every((k) => k in spec.settings.sections)) return spec
    return { ...spec, settings: { ...spec.settings, sections: { ...defaults, ...spec.settings.sections } } }
  }

  private guardStore(): void {
    if (this.storeFailure)
      throw new TeaError('STORE_FULL', `the store failed in this tea serve (${this.storeFailure}); no run starts until it restarts`, {
        hint: 'free space under the data dir, then restart tea serve (systemctl restart tea); the failed run resumes then',
      })
  }

  private guardMemory(): void {
    if (!this.opts.minFreeBytes) return
    const free = (this.opts.freeMemory ?? memAvailable)()
    if (free < this.opts.minFreeBytes) {
      const mb = (n: number) => `${Math.round(n / 2 ** 20)} MB`
      throw new TeaError(
        'LOW_MEMORY',
        `only ${mb(free)} of memory is available, below the ${mb(this.opts.minFreeBytes)} tea serve keeps free`,
        {
          hint: 'retry later, unload a model (ollama stop), or lower --min-free-mb',
          details: { freeBytes: free, minFreeBytes: this.opts.minFreeBytes },
        },
      )
    }
  }

  /** Sets a run's entry in a map of the latest runs (at most REMEMBERED). */
  private remember<T>(map: Map<string, T>, runId: string, value: T): void {
    map.delete(runId)
    map.set(runId, value)
    if (map.size > REMEMBERED) map.delete(map.keys().next().value!)
  }

  private feedFor(runId: string): EventFeed {
    const feed = new EventFeed()
    this.feeds.delete(runId)
    this.feeds.set(runId, feed)
    if (this.feeds.size > ENDED_FEEDS) {
      for (const [id, f] of this.feeds) {
        if (this.feeds.size <= ENDED_FEEDS) break
        if (f.isEnded) this.feeds.delete(id)
      }
    }
    return feed
  }

  private enqueue(job: Job): { run_id: string; status: 'running' | 'queued' } {
    this.guardStore()
    if (this.stopping) throw new TeaError('RUN_NOT_ACTIVE', 'tea serve is stopping', { details: { runId: job.runId } })
    this.queue.push(job)
    this.pump()
    return { run_id: job.runId, status: this.active.has(job.runId) ? 'running' : 'queued' }
  }

  private pump(): void {
    while (!this.stopping && this.active.size < this.opts.maxConcurrent && this.queue.length) {
      const job = this.queue.shift()!
      const done = this.execute(job).then((ended) => {
        this.active.delete(job.runId)
        this.metrics.runsEnded.inc({ status: ended })
        job.feed.end()
        this.opts.onEnded?.(job.runId, job.agent, ended)
        this.pump()
        return ended
      })
      this.active.set(job.runId, { job, done })
    }
  }

  private async execute(job: Job): Promise<Ended> {
    const { store, registry, dataDir, io, log } = this.opts
    const emit = (event: RunEvent) => {
      this.metrics.event(job.agent, event)
      if (event.type === 'node_end')
        this.remember(this.wrote, job.runId, { node: event.node, keys: Object.keys(event.update).slice(0, 20) })
      job.feed.publish(event)
    }
    const services: RunServices = {
      store: this.metrics.meterStore(store),
      registry,
      dataDir,
      llm: this.metrics.meterModels(await modelClient(io, { ...(this.opts.replay && { replay: this.opts.replay }) })),
      emit,
      signal: job.controller.signal,
      warn: (w) => log(`warning: ${w.message}`),
    }
    log(`run ${job.runId} (${job.agent}) ${job.kind === 'start' ? 'started' : 'resumed'}`)
    this.metrics.runsStarted.inc({ kind: job.kind })
    this.hints.delete(job.runId)
    try {
      // Written before the run goes on: if this attempt takes the process down too, the next start knows.
      if (job.kind === 'resume') {
        if (job.auto) await markAutoResume(store, job.runId, job.auto.deaths, job.auto.step)
        else await clearAutoResume(store, job.runId)
      }
      const result =
        job.kind === 'start'
          ? await startRun(this.withSections(job.spec), services, { runId: job.runId, input: job.input })
          : await resumeRun(services, {
              runId: job.runId,
              edits: job.edits,
              load: (path, runLanguages) =>
                requireAgentLoading(path, registry, undefined, runLanguages && { runLanguages }).then((spec) => this.withSections(spec)),
            })
      if (result.status === 'failed' && STORE_FAILURES.has(result.error?.code ?? '')) this.storeFailure = result.error!.code
      const why = result.status === 'failed' && result.error ? `: [${result.error.code}] ${errorMessage(result.error)}` : ''
      log(`run ${job.runId} ${result.status}${why}`)
      if (result.error?.hint) this.remember(this.hints, job.runId, result.error.hint)
      if (result.status === 'interrupted') void this.notifier?.paused(job.runId)
      return result.status
    } catch (e) {
      // Before or outside the run (the agent no longer loads, the store is full, a lost claim): reported on the
      // run's stream and in the log; the daemon goes on.
      if (isTeaError(e) && STORE_FAILURES.has(e.code)) this.storeFailure = e.code
      const error = isTeaError(e) ? e.toJSON() : { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) }
      if (isTeaError(e) && e.hint) this.remember(this.hints, job.runId, e.hint)
      emit({ type: 'error', error })
      log(`run ${job.runId} could not run: [${String(error.code)}] ${String(error.message)}`)
      return 'error'
    }
  }
}

/** Memory the kernel can give a new process without swapping (MemAvailable); free memory where that is unknown. */
export function memAvailable(): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))
    if (m) return Number(m[1]) * 1024
  } catch {}
  return freemem()
}

function readStopped(file: string): string[] {
  try {
    const ids = parseJson(readFileSync(file, 'utf8'), file)
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : []
  } catch {
    return []
  }
}
