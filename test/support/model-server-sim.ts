/**
 * How a model server on a board spends its time, for the fake model server's `simulate` mode: one or a few models
 * resident at once (`maxLoaded`, Ollama's OLLAMA_MAX_LOADED_MODELS), loading one costs `loadMs`, each resident
 * model serves `slots` requests at once (OLLAMA_NUM_PARALLEL) at `tokensPerSecond`, and a model is unloaded when
 * its `keep_alive` runs out (0: as soon as it is idle) or when another model needs its place and it is idle.
 *
 * Requests are taken strictly in arrival order, as Ollama's own scheduler takes them: a request that must wait
 * (its model is loading, its slots are full, or no resident model is idle to make room) holds up those behind it.
 * A request whose client hung up leaves the queue, or frees its slot.
 */

import { keepAliveMs } from '../../src/llm/keep-alive.ts'

export interface SimulatorConfig {
  /** Milliseconds to load a model: one figure for all, or per model name (`default` for the rest). */
  loadMs: number | Record<string, number>
  /** Requests one resident model serves at once. */
  slots: number
  /** Models resident at once. */
  maxLoaded: number
  /** Generation speed; a reply of N tokens takes N / tokensPerSecond seconds. */
  tokensPerSecond: number
  /** keep_alive when a request gives none, in ms (Ollama's default is 5 minutes). */
  defaultKeepAliveMs?: number
}

export interface SimulatorStats {
  /** Models loaded, in order (each is a load the server paid for). */
  loads: string[]
  /** Requests served, with the time each waited in the server before generating. */
  served: Array<{ model: string; queuedMs: number }>
  /** The most requests generating at the same time (over all models): side by side, not one after the other. */
  mostBusy: number
}

interface Resident {
  state: 'loading' | 'ready'
  busy: number
  expiry?: NodeJS.Timeout
  expiresAt: number
}

interface Pending {
  model: string
  at: number
  start: () => void
  gone: boolean
}

export interface Admission {
  /** The request may generate now; call `done` when its reply is out (or its client is gone). */
  done(keepAlive: unknown): void
}

export interface Simulator {
  /** Waits until the request's model is resident with a free slot. `hungUp` settles when the client goes away. */
  admit(model: string, hungUp: Promise<void>): Promise<Admission>
  /** Milliseconds a reply of this many tokens takes to generate. */
  generationMs(tokens: number): number
  /** Ollama's unload request (empty messages, keep_alive given): sets the model's expiry as a request would. */
  expire(model: string, keepAlive: unknown): void
  /** What `/api/ps` lists. */
  resident(): Array<{ name: string; model: string; expires_at: string; size_vram: number }>
  stats(): SimulatorStats
  close(): void
}

export function createSimulator(config: SimulatorConfig): Simulator {
  const models = new Map<string, Resident>()
  const queue: Pending[] = []
  const stats: SimulatorStats = { loads: [], served: [], mostBusy: 0 }
  const timers = new Set<NodeJS.Timeout>()
  const defaultKeepAlive = config.defaultKeepAliveMs ?? 5 * 60_000
  const loadMs = (model: string): number =>
    typeof config.loadMs === 'number' ? config.loadMs : (config.loadMs[model] ?? config.loadMs.default ?? 0)

  function later(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      timers.delete(t)
      fn()
    }, ms)
    // The server's own socket keeps a process alive while it serves; a keep_alive expiry (5 min by default) set by
    // a reply that finished after close() must not.
    t.unref()
    timers.add(t)
    return t
  }

  function unload(model: string): void {
    const m = models.get(model)
    if (!m || m.busy > 0 || m.state !== 'ready') return
    if (m.expiry) clearTimeout(m.expiry)
    models.delete(model)
    pump()
  }

  function setExpiry(model: string, keepAlive: unknown): void {
    const m = models.get(model)
    if (!m) return
    if (m.expiry) clearTimeout(m.expiry)
    m.expiry = undefined
    const ms = keepAlive === undefined ? defaultKeepAlive : (keepAliveMs(keepAlive) ?? defaultKeepAlive)
    m.expiresAt = ms < 0 ? Number.POSITIVE_INFINITY : Date.now() + ms
    if (m.busy > 0) return
    if (ms === 0) unload(model)
    else if (ms > 0) m.expiry = later(ms, () => unload(model))
  }

  /** Starts what the head of the queue allows, in order; stops at the first request that must wait. */
  function pump(): void {
    while (queue.length > 0) {
      const head = queue[0]!
      if (head.gone) {
        queue.shift()
        continue
      }
      const m = models.get(head.model)
      if (m?.state === 'ready' && m.busy < config.slots) {
        queue.shift()
        m.busy++
        stats.mostBusy = Math.max(
          stats.mostBusy,
          [...models.values()].reduce((n, r) => n + r.busy, 0),
        )
        if (m.expiry) clearTimeout(m.expiry)
        m.expiry = undefined
        stats.served.push({ model: head.model, queuedMs: Date.now() - head.at })
        head.start()
        continue
      }
      if (m) return
      if (models.size >= config.maxLoaded) {
        const idle = [...models].find(([, r]) => r.state === 'ready' && r.busy === 0)
        if (!idle) return
        if (idle[1].expiry) clearTimeout(idle[1].expiry)
        models.delete(idle[0])
      }
      const loading: Resident = { state: 'loading', busy: 0, expiresAt: 0 }
      models.set(head.model, loading)
      stats.loads.push(head.model)
      later(loadMs(head.model), () => {
        loading.state = 'ready'
        pump()
      })
      return
    }
  }

  return {
    admit(model, hungUp) {
      return new Promise((resolve) => {
        let finished = false
        const pending: Pending = {
          model,
          at: Date.now(),
          gone: false,
          start: () =>
            resolve({
              done(keepAlive) {
                if (finished) return
                finished = true
                const m = models.get(model)
                if (m) m.busy--
                setExpiry(model, keepAlive)
                pump()
              },
            }),
        }
        void hungUp.then(() => {
          pending.gone = true
          pump()
        })
        queue.push(pending)
        pump()
      })
    },
    generationMs: (tokens) => (tokens / config.tokensPerSecond) * 1000,
    expire: (model, keepAlive) => setExpiry(model, keepAlive),
    resident: () =>
      [...models]
        .filter(([, m]) => m.state === 'ready')
        .map(([name, m]) => ({
          name,
          model: name,
          expires_at: new Date(Number.isFinite(m.expiresAt) ? m.expiresAt : 8.64e15).toISOString(),
          size_vram: 0,
        })),
    stats: () => ({ loads: [...stats.loads], served: stats.served.map((s) => ({ ...s })), mostBusy: stats.mostBusy }),
    close() {
      for (const t of timers) clearTimeout(t)
      for (const m of models.values()) if (m.expiry) clearTimeout(m.expiry)
      timers.clear()
    },
  }
}
