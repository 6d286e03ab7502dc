/**
 * The model-call scheduler: one queue per model server, between the client and the providers, shared by every run
 * in the process (pool workers reach the model through the main thread, so their calls queue here too).
 *
 * A board's model server holds one or two models at a time and works on a few calls at once; loading another model
 * costs seconds, and a call sent beyond the server's slots waits inside the server while its timeout runs. So a
 * call is sent only when
 * - the server has a free slot (`slots`), and
 * - its model is loaded, or there is room to load it: fewer than `maxLoaded` models are loaded, or one of them has
 *   no call in flight and can make way (the least recently used first, as the server itself evicts).
 * Among the waiting calls, those whose model is loaded go first, oldest first: calls are grouped by model and the
 * server swaps less. A model whose last call has just finished is not evicted at once (`holdMs`, anticipation as
 * in disk schedulers): the caller that got the reply usually asks the same model again a few milliseconds later,
 * and a swap costs seconds. Not always: a caller that drafts with one model and reviews with another turns to the
 * other model next, and holding would only delay it. So a model's hold is given up once it ran out unused, and
 * taken up again when a call for the model comes within the hold after it was evicted (a hold would have paid). No call is passed over for longer than `maxWaitMs`: once the oldest waiting call has
 * waited that long, nothing else is sent until it can go, so the loaded model drains and makes way.
 *
 * A call's timeout starts when it is sent: the provider starts its timer when the scheduler calls it.
 */

import { cancelled } from '../core/signals.ts'
import { monotonicMs } from '../core/util.ts'

export interface ServerLimits {
  /** Calls the server works on at once; Infinity for no limit. */
  slots: number
  /** Models the server keeps loaded at once; Infinity for no limit (calls are then not grouped). */
  maxLoaded: number
  /** The longest a call may be passed over for calls to a loaded model, in ms. */
  maxWaitMs: number
  /** How long a model that just finished a call is kept from eviction, in ms. */
  holdMs: number
}

export interface ScheduledCall {
  /** The server's base URL: calls to one server share its queue. */
  server: string
  model: string
  limits: ServerLimits
  signal?: AbortSignal
}

export interface CallScheduler {
  /** Runs `send` once the call may go, and gives back what it gives. A call still waiting when `signal` fires is dropped. */
  run<T>(call: ScheduledCall, send: () => Promise<T>): Promise<T>
  /** Calls to `model` on `server` waiting or in flight. */
  pending(server: string, model: string): number
  /**
   * Settles once the scheduler knows what the server has loaded: the first call to a server asks it (`ask`, e.g.
   * Ollama's /api/ps), and every call waits for that answer, so the first calls are ordered knowing it.
   */
  learn(server: string, limits: ServerLimits, ask: () => Promise<string[]>): Promise<void>
  /** Calls `listener` with each call's wait for its turn, in ms, as it is sent (tea serve's /metrics); returns its removal. */
  observeWaits(listener: (waitMs: number, model: string) => void): () => void
}

interface Waiting {
  model: string
  since: number
  go: () => void
}

class ServerQueue {
  readonly waiting: Waiting[] = []
  readonly inFlight = new Map<string, number>()
  /** Loaded models as far as we know, least recently used first. */
  resident: string[] = []
  busy = 0
  private pumping = false
  /** When each model's last call finished. */
  private readonly lastDone = new Map<string, number>()
  /** Models whose last hold ran out with no call for them: not held again until a hold would have paid. */
  private readonly holdUnpaid = new Set<string>()
  private wakeAt = 0

  constructor(public limits: ServerLimits) {}

  admit(model: string, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(cancelled('LLM call cancelled'))
    if (this.holdUnpaid.has(model) && !this.resident.includes(model) && Date.now() - (this.lastDone.get(model) ?? 0) <= this.limits.holdMs)
      this.holdUnpaid.delete(model)
    return new Promise((resolve, reject) => {
      const entry: Waiting = {
        model,
        since: Date.now(),
        go: () => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        },
      }
      const onAbort = (): void => {
        const i = this.waiting.indexOf(entry)
        if (i === -1) return
        this.waiting.splice(i, 1)
        reject(cancelled('LLM call cancelled'))
        this.soon()
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(entry)
      this.soon()
    })
  }

  finish(model: string): void {
    this.busy--
    this.lastDone.set(model, Date.now())
    const n = (this.inFlight.get(model) ?? 1) - 1
    if (n > 0) this.inFlight.set(model, n)
    else this.inFlight.delete(model)
    this.soon()
  }

  /**
   * Chooses on the next turn of the event loop, not at once: calls that arrive together (parallel branches, a
   * plan's ready subtasks) and the call a finished one's caller makes next are then chosen among together.
   */
  private soon(): void {
    if (this.pumping) return
    this.pumping = true
    setImmediate(() => {
      this.pumping = false
      this.pump()
    })
  }

  private pump(): void {
    while (this.busy < this.limits.slots) {
      const next = this.choose(Date.now())
      if (!next) return
      this.start(next)
    }
  }

  private choose(now: number): Waiting | undefined {
    const oldest = this.waiting[0]
    if (!oldest) return undefined
    if (now - oldest.since >= this.limits.maxWaitMs) return this.canSend(oldest.model) ? oldest : undefined
    const loaded = this.waiting.find((w) => this.resident.includes(w.model))
    if (loaded) return loaded
    const next = this.waiting.find((w) => this.canSend(w.model))
    if (!next || this.resident.length < this.limits.maxLoaded) return next
    // Sending it evicts a model: not one whose caller may be about to ask it again.
    const idle = this.idleResident()
    const held = idle === undefined || this.holdUnpaid.has(idle) ? 0 : (this.lastDone.get(idle) ?? 0) + this.limits.holdMs - now
    if (held <= 0) return next
    this.wake(held)
    return undefined
  }

  /** Chooses again in `ms`, unless a wake-up already due by then is pending. */
  private wake(ms: number): void {
    const at = Date.now() + ms
    if (this.wakeAt !== 0 && this.wakeAt <= at) return
    this.wakeAt = at
    setTimeout(() => {
      this.wakeAt = 0
      this.pump()
    }, ms)
  }

  private canSend(model: string): boolean {
    return this.resident.includes(model) || this.resident.length < this.limits.maxLoaded || this.idleResident() !== undefined
  }

  private idleResident(): string | undefined {
    return this.resident.find((m) => !this.inFlight.has(m))
  }

  private start(call: Waiting): void {
    this.waiting.splice(this.waiting.indexOf(call), 1)
    const at = this.resident.indexOf(call.model)
    if (at !== -1) this.resident.splice(at, 1)
    else if (this.resident.length >= this.limits.maxLoaded) {
      const evicted = this.idleResident()
      this.resident = this.resident.filter((m) => m !== evicted)
      // Its hold (if it had one) ran out with no call for it.
      if (evicted !== undefined && this.lastDone.has(evicted)) this.holdUnpaid.add(evicted)
    }
    this.resident.push(call.model)
    this.inFlight.set(call.model, (this.inFlight.get(call.model) ?? 0) + 1)
    this.busy++
    call.go()
  }
}

export function createCallScheduler(): CallScheduler {
  const servers = new Map<string, ServerQueue>()
  const learnt = new Map<string, Promise<void>>()
  const queueFor = (server: string, limits: ServerLimits): ServerQueue => {
    let q = servers.get(server)
    if (!q) servers.set(server, (q = new ServerQueue(limits)))
    else q.limits = limits
    return q
  }
  const waitListeners = new Set<(waitMs: number, model: string) => void>()
  return {
    async run(call, send) {
      const q = queueFor(call.server, call.limits)
      const t0 = monotonicMs()
      await q.admit(call.model, call.signal)
      for (const listener of waitListeners) listener(monotonicMs() - t0, call.model)
      try {
        return await send()
      } finally {
        q.finish(call.model)
      }
    },
    pending(server, model) {
      const q = servers.get(server)
      if (!q) return 0
      return (q.inFlight.get(model) ?? 0) + q.waiting.filter((w) => w.model === model).length
    },
    observeWaits(listener) {
      waitListeners.add(listener)
      return () => waitListeners.delete(listener)
    },
    learn(server, limits, ask) {
      let known = learnt.get(server)
      if (!known) {
        known = ask().then((models) => {
          const q = queueFor(server, limits)
          const resident = [...models.filter((m) => !q.resident.includes(m)), ...q.resident]
          // Over the limit: the server's models we have not used go first (least recently used for all we know).
          while (resident.length > q.limits.maxLoaded) {
            const idle = resident.findIndex((m) => !q.inFlight.has(m))
            if (idle === -1) break
            resident.splice(idle, 1)
          }
          q.resident = resident
        })
        learnt.set(server, known)
      }
      return known
    },
  }
}

/** The process's scheduler: every client in the process queues its calls here. */
export const sharedCallScheduler: CallScheduler = createCallScheduler()
