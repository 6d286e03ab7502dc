/**
 * The event feed of `tea serve` (src/cli/serve/event-feed.ts): late clients get the run from its start, a slow
 * client resumes on drain where it stopped, one the window has passed is cut off, and the run never waits.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { EventFeed, type FeedClient } from '../../../src/cli/serve/event-feed.ts'
import type { RunEvent } from '../../../src/core/events.ts'

/** A client whose socket takes `room` frames, then reports full until `drain()`. */
function client(room = Infinity) {
  const frames: string[] = []
  let space = room
  let resume: (() => void) | undefined
  const state = { ended: false, dropped: false }
  const c: FeedClient = {
    write(frame) {
      frames.push(frame)
      return --space > 0
    },
    onDrain(fn) {
      resume = fn
    },
    end: () => void (state.ended = true),
    drop: () => void (state.dropped = true),
  }
  return {
    c,
    state,
    frames,
    types: () => frames.map((f) => JSON.parse(f.slice(6)).type as string),
    drain(more = Infinity) {
      space = more
      const r = resume
      resume = undefined
      r?.()
    },
  }
}

const nodeEnd = (step: number, bytes = 10): RunEvent => ({ type: 'node_end', node: 'n', step, ms: 1, update: { x: 'y'.repeat(bytes) } })

test('a client that connects late gets every event from the start, then live ones, and its stream ends with the run', () => {
  const feed = new EventFeed()
  feed.publish({ type: 'start', runId: 'r', agent: 'a', resumed: false })
  feed.publish(nodeEnd(1))
  const late = client()
  feed.subscribe(late.c)
  assert.equal(late.types(), ['start', 'node_end'])
  feed.publish({ type: 'complete', state: {} })
  assert.is(late.state.ended, false)
  feed.end()
  assert.equal(late.types(), ['start', 'node_end', 'complete'])
  assert.is(late.state.ended, true)
  const after = client()
  feed.subscribe(after.c)
  assert.equal(after.types(), ['start', 'node_end', 'complete'], 'an ended feed replays and ends at once')
  assert.is(after.state.ended, true)
})

test('a slow client is not written to while its socket is full, and resumes where it stopped on drain', () => {
  const feed = new EventFeed()
  const slow = client(2)
  feed.subscribe(slow.c)
  for (let i = 1; i <= 5; i++) feed.publish(nodeEnd(i))
  assert.is(slow.frames.length, 2, 'publish never blocks; the client got what its socket took')
  slow.drain()
  assert.equal(
    slow.frames.map((f) => JSON.parse(f.slice(6)).step),
    [1, 2, 3, 4, 5],
  )
  feed.end()
  assert.is(slow.state.ended, true)
})

test('a burst past the 8 MB window does not cut off a client that is behind but within 24 MB', () => {
  const feed = new EventFeed()
  const behind = client(1)
  feed.subscribe(behind.c)
  for (let i = 1; i <= 12; i++) feed.publish(nodeEnd(i, 1 << 20)) // 12 MB while its socket is full
  assert.is(behind.state.dropped, false)
  behind.drain()
  assert.is(behind.frames.length, 12, 'it gets every event once it reads')
  const late = client()
  feed.subscribe(late.c)
  assert.ok(late.frames.length <= 8, `a late client gets the 8 MB window (${late.frames.length})`)
})

test('a client the 24 MB kept for the ones behind has moved past is cut off; the others go on', () => {
  const feed = new EventFeed()
  const stuck = client(1)
  const fast = client()
  feed.subscribe(stuck.c)
  feed.subscribe(fast.c)
  for (let i = 1; i <= 30; i++) feed.publish(nodeEnd(i, 1 << 20)) // 30 MB of events
  assert.is(stuck.state.dropped, true)
  assert.is(feed.dropped, 1)
  assert.is(fast.frames.length, 30)
  const late = client()
  feed.subscribe(late.c)
  assert.ok(late.frames.length >= 6 && late.frames.length <= 8, `a late client starts at the oldest kept event (${late.frames.length})`)
  assert.is(JSON.parse(late.frames.at(-1)!.slice(6)).step, 30)
})

test('token events go to caught-up clients only and are not kept', () => {
  const feed = new EventFeed()
  const live = client()
  feed.subscribe(live.c)
  feed.publish({ type: 'llm_token', node: 'n', token: 'he' })
  feed.publish(nodeEnd(1))
  assert.equal(live.types(), ['llm_token', 'node_end'])
  const late = client()
  feed.subscribe(late.c)
  assert.equal(late.types(), ['node_end'])
})

test.run()
