/**
 * `GET /metrics`: what a Prometheus scraper reads from `tea serve`, in its text exposition format (version 0.0.4),
 * written here by hand (no client library). Counted where it is already observable from the CLI layer, so no lower
 * layer knows of metrics:
 * - runs by status: the store's records (and the manager's queue), read at each scrape;
 * - runs started and ended, node durations: the events each run of this process emits (run-manager.ts);
 * - model calls: the model client the manager hands each run, wrapped (`meterModels`), and the time a call waits for
 *   its turn in the process's call scheduler, which tells its observers (`observeScheduler`);
 * - checkpoints written: the store the manager hands each run, wrapped (`meterStore`);
 * - memory: `process.memoryUsage()` at the scrape.
 * Label values come from agent files and model names: escaped as the format says, and the series of one metric are
 * bounded (past `MAX_SERIES`, new label sets are counted under `_other`).
 */

import { monotonicMs } from '../../core/util.ts'
import type { AgentSpec } from '../../agent/types.ts'
import type { RunEvent } from '../../core/events.ts'
import type { CallScheduler } from '../../llm/call-scheduler.ts'
import type { LlmClient } from '../../llm/types.ts'
import type { Store } from '../../store/types.ts'

const MAX_SERIES = 500
const MAX_LABEL = 120

type Labels = Record<string, string>

function escapeLabel(value: string): string {
  const v = value.length > MAX_LABEL ? `${value.slice(0, MAX_LABEL)}…` : value
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const all = Object.entries(labels)
  if (extra) all.push(extra)
  return all.length ? `{${all.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : ''
}

/** A number as the format writes it. */
function num(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (n === Number.POSITIVE_INFINITY) return '+Inf'
  if (n === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(Math.round(n * 1e6) / 1e6)
}

/** A label set's key in a metric's map; a new one past MAX_SERIES is folded into `_other`. */
function seriesKey<T>(series: Map<string, { labels: Labels; value: T }>, labels: Labels): string {
  const key = JSON.stringify(labels)
  if (series.has(key) || series.size < MAX_SERIES) return key
  return JSON.stringify(Object.fromEntries(Object.keys(labels).map((k) => [k, '_other'])))
}

class Counter {
  private readonly series = new Map<string, { labels: Labels; value: number }>()
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = seriesKey(this.series, labels)
    const s = this.series.get(key)
    if (s) s.value += by
    else this.series.set(key, { labels: JSON.parse(key) as Labels, value: by })
  }

  render(): string[] {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} counter`,
      ...[...this.series.values()].map((s) => `${this.name}${labelText(s.labels)} ${num(s.value)}`),
    ]
  }
}

class Histogram {
  private readonly series = new Map<string, { labels: Labels; value: { counts: number[]; sum: number; count: number } }>()
  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds in seconds, ascending; +Inf is added. */
    readonly buckets: number[],
  ) {}

  observe(labels: Labels, seconds: number): void {
    const key = seriesKey(this.series, labels)
    let s = this.series.get(key)
    if (!s)
      this.series.set(key, (s = { labels: JSON.parse(key) as Labels, value: { counts: this.buckets.map(() => 0), sum: 0, count: 0 } }))
    this.buckets.forEach((b, i) => {
      if (seconds <= b) s.value.counts[i]!++
    })
    s.value.sum += seconds
    s.value.count++
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`]
    for (const { labels, value } of this.series.values()) {
      this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket${labelText(labels, ['le', num(b)])} ${value.counts[i]}`))
      lines.push(`${this.name}_bucket${labelText(labels, ['le', '+Inf'])} ${value.count}`)
      lines.push(`${this.name}_sum${labelText(labels)} ${num(value.sum)}`)
      lines.push(`${this.name}_count${labelText(labels)} ${value.count}`)
    }
    return lines
  }
}

function gauge(name: string, help: string, values: Array<[Labels, number]>): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...values.map(([l, v]) => `${name}${labelText(l)} ${num(v)}`)]
}

const STATUSES = ['queued', 'running', 'interrupted', 'failed', 'completed', 'cancelled']

export class ServeMetrics {
  readonly runsStarted = new Counter('tea_runs_started_total', 'Runs this tea serve started or resumed, by kind (start, resume).')
  readonly runsEnded = new Counter('tea_runs_ended_total', 'Runs this tea serve ran that ended, by status.')
  readonly nodeSeconds = new Histogram(
    'tea_node_duration_seconds',
    'Time each node took, by agent and node.',
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  )
  readonly modelSeconds = new Histogram(
    'tea_model_call_duration_seconds',
    'Model calls, from the call to the whole reply (waiting and retries included), by model and outcome.',
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  )
  readonly queueSeconds = new Histogram(
    'tea_model_queue_wait_seconds',
    'Time a model call waited in the call scheduler before it was sent, by model.',
    [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  )
  readonly checkpoints = new Counter('tea_checkpoints_written_total', 'Checkpoint records committed, by kind (step, snapshot, subtask).')
  private readonly started = Date.now()

  /** Counts what a run's events tell: a node's duration, the run's end. */
  event(agent: string, event: RunEvent): void {
    if (event.type === 'node_end') this.nodeSeconds.observe({ agent, node: event.node }, event.ms / 1000)
  }

  /** Model calls of a run's client, timed. */
  meterModels(make: (spec: AgentSpec) => LlmClient): (spec: AgentSpec) => LlmClient {
    return (spec) => {
      const client = make(spec)
      return {
        call: async (request) => {
          const t0 = monotonicMs()
          try {
            const r = await client.call(request)
            this.modelSeconds.observe({ model: r.model, outcome: 'ok' }, (monotonicMs() - t0) / 1000)
            return r
          } catch (e) {
            const model = typeof request.model === 'string' ? request.model : (spec.settings.llm?.model ?? 'unknown')
            this.modelSeconds.observe({ model: String(model), outcome: 'error' }, (monotonicMs() - t0) / 1000)
            throw e
          }
        },
        ...(client.embed && { embed: client.embed.bind(client) }),
        close: () => client.close(),
      }
    }
  }

  /** Each model call's wait for its turn in the process's call scheduler. Returns the removal of the observer. */
  observeScheduler(scheduler: CallScheduler): () => void {
    return scheduler.observeWaits((ms, model) => this.queueSeconds.observe({ model }, ms / 1000))
  }

  /** The store, its checkpoint writes counted once they commit. */
  meterStore(store: Store): Store {
    const count =
      <A extends unknown[]>(kind: string, write: (...args: A) => Promise<void>) =>
      async (...args: A): Promise<void> => {
        await write(...args)
        this.checkpoints.inc({ kind })
      }
    const appendStep = count('step', store.appendStep.bind(store))
    const snapshot = count('snapshot', store.snapshot.bind(store))
    const putSubtask = count('subtask', store.putSubtask.bind(store))
    const createRun: Store['createRun'] = async (run, first) => {
      await store.createRun(run, first)
      if (first) this.checkpoints.inc({ kind: 'snapshot' })
    }
    const own: Partial<Store> = { appendStep, snapshot, putSubtask, createRun }
    return new Proxy(store, {
      get(target, prop) {
        if (Object.hasOwn(own, prop)) return own[prop as keyof Store]
        const value = Reflect.get(target, prop, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  }

  /** The whole exposition: `runs` are the store's runs by status (queued ones included). */
  render(runs: Record<string, number>, active: number): string {
    const mem = process.memoryUsage()
    const lines = [
      ...gauge(
        'tea_runs',
        'Runs in the data dir by status (queued: waiting for a slot in this tea serve).',
        STATUSES.map((s) => [{ status: s }, runs[s] ?? 0]),
      ),
      ...gauge('tea_runs_active', 'Runs this tea serve is running now.', [[{}, active]]),
      ...this.runsStarted.render(),
      ...this.runsEnded.render(),
      ...this.nodeSeconds.render(),
      ...this.modelSeconds.render(),
      ...this.queueSeconds.render(),
      ...this.checkpoints.render(),
      ...gauge('process_resident_memory_bytes', 'Resident memory of the tea serve process.', [[{}, mem.rss]]),
      ...gauge('nodejs_heap_used_bytes', "V8's heap in use.", [[{}, mem.heapUsed]]),
      ...gauge('nodejs_heap_total_bytes', "V8's heap reserved.", [[{}, mem.heapTotal]]),
      ...gauge('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript (buffers, lmdb).', [[{}, mem.external]]),
      ...gauge('process_start_time_seconds', 'When tea serve started, in seconds since the epoch.', [
        [{}, Math.floor(this.started / 1000)],
      ]),
    ]
    return `${lines.join('\n')}\n`
  }
}
