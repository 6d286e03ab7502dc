/**
 * One run's events as `tea serve` hands them out: kept in order (so a client that connects late gets the run
 * from its start) and pushed to every connected Server-Sent Events client.
 *
 * Backpressure: the run never waits for a client, and a slow client costs no memory of its own. Events are
 * kept once, as SSE frames, in a window bounded by bytes and count; each client holds only a cursor into it.
 * A client is written to while its socket takes data (`write` returns true), and resumes from its cursor on
 * `drain`. Events a connected client has not been sent yet are kept up to 24 MB, so a burst does not cut off a
 * client that reads; a client so far behind that even that has moved past its cursor would see a gap: it is cut
 * off instead (it may reconnect). A client that connects late starts at the oldest event still kept.
 * Token events (`llm_token`) are not kept: they go to the clients that are caught up; the node's `node_end`
 * repeats what they said. Kept events carry `at` besides `--stream`'s fields: when tea serve published them.
 */

import type { RunEvent } from '../../core/events.ts'

/** Bytes and events kept per run for clients that connect late. */
const WINDOW_BYTES = 8 << 20
const WINDOW_EVENTS = 5000
/**
 * Bytes kept at most for connected clients that are behind: a run can emit a burst (a large final state after
 * large updates) faster than a reading client takes it, and that client must not be cut off for it. Past this,
 * the clients still behind are cut off.
 */
const HARD_BYTES = 24 << 20

export interface FeedClient {
  /** Writes one SSE frame; false when the socket's buffer is full (Node's `write` contract). */
  write(frame: string): boolean
  /** Calls `resume` once when the socket has room again. */
  onDrain(resume: () => void): void
  end(): void
  /** Drops the connection (a client too far behind). */
  drop(): void
}

interface Cursor {
  client: FeedClient
  /** Sequence number of the next event to send. */
  next: number
  waiting: boolean
}

export class EventFeed {
  private readonly frames: string[] = []
  /** Sequence number of frames[0]. */
  private first = 0
  private bytes = 0
  private readonly cursors = new Set<Cursor>()
  private ended = false
  /** Clients cut off for falling behind the window. */
  dropped = 0

  publish(event: RunEvent): void {
    if (this.ended) return
    if (event.type === 'llm_token') {
      const frame = sseFrame(event)
      for (const c of this.cursors) if (!c.waiting && c.next === this.end_()) c.client.write(frame)
      return
    }
    // When it happened (ms since the epoch), for a client that connects late: the page's durations.
    const frame = sseFrame({ ...event, at: Date.now() })
    this.frames.push(frame)
    this.bytes += frame.length
    this.trim()
    for (const c of this.cursors) this.pump(c)
  }

  /** Adds a client: it gets the kept events, then live ones; the stream ends after the run's last event. */
  subscribe(client: FeedClient): () => void {
    const cursor: Cursor = { client, next: this.first, waiting: false }
    this.cursors.add(cursor)
    this.pump(cursor)
    return () => this.cursors.delete(cursor)
  }

  /** The run is over: each client's stream ends once it has been sent every event. */
  end(): void {
    this.ended = true
    for (const c of this.cursors) this.pump(c)
  }

  get isEnded(): boolean {
    return this.ended
  }

  /** Drops the oldest events past the window that no connected client still needs, and any past the hard cap. */
  private trim(): void {
    const needed = Math.min(...[...this.cursors].map((c) => c.next))
    while (this.frames.length > 1 && (this.bytes > WINDOW_BYTES || this.frames.length > WINDOW_EVENTS)) {
      if (this.first >= needed && this.bytes <= HARD_BYTES && this.frames.length <= WINDOW_EVENTS * 4) break
      this.bytes -= this.frames.shift()!.length
      this.first++
    }
  }

  private end_(): number {
    return this.first + this.frames.length
  }

  private pump(c: Cursor): void {
    if (!this.cursors.has(c)) return
    if (c.next < this.first) {
      this.cursors.delete(c)
      this.dropped++
      c.client.drop()
      return
    }
    if (c.waiting) return
    while (c.next < this.end_()) {
      const ok = c.client.write(this.frames[c.next++ - this.first]!)
      if (!ok) {
        c.waiting = true
        c.client.onDrain(() => {
          c.waiting = false
          this.pump(c)
          this.trim() // what it no longer needs may go now
        })
        return
      }
    }
    if (this.ended) {
      this.cursors.delete(c)
      c.client.end()
    }
  }
}

export function sseFrame(event: RunEvent | (RunEvent & { at: number })): string {
  return `data: ${JSON.stringify(event)}\n\n`
}
