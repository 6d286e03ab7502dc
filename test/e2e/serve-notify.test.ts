/**
 * The webhook on pause (issue 31 item 2): a serve config's `notify:` gets an ntfy-compatible POST when a run pauses
 * at an interrupt — the message as plain text, Title, Priority, Click (the run on the page), the token as a bearer —
 * tested against a local HTTP server on 127.0.0.1. A webhook that fails or hangs is a log line after its timeout;
 * the run and the daemon go on.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch } from './cli.ts'
import { startServe } from './serve-harness.ts'

const REVIEW = `name: review
nodes:
  - name: draft
    description: Check the note before it is sent
    run: "return { note: 'Note about ' + state.topic }"
    interrupt: after
  - name: send
    run: "return { sent: state.approved ? state.note : null }"
`

interface Received {
  headers: IncomingMessage['headers']
  method: string
  body: string
}

/** A webhook receiver on loopback: `answer` decides each reply (default 200); `next()` resolves with the next request. */
async function receiver(answer: (res: ServerResponse) => void = (res) => res.end('ok')) {
  const got: Received[] = []
  const waiters: Array<(r: Received) => void> = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      const r = { headers: req.headers, method: req.method ?? '', body }
      got.push(r)
      waiters.shift()?.(r)
      answer(res)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    next: () => new Promise<Received>((r) => (got.length > waiters.length ? r(got[waiters.length]!) : waiters.push(r))),
    close: () => {
      server.closeAllConnections()
      return new Promise((r) => server.close(r))
    },
  }
}

function setup(notify: string) {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/review.yaml'), REVIEW)
  writeFileSync(s.path('ntfy-token'), 'tk_webhook_secret\n')
  writeFileSync(s.path('serve.yaml'), `agents: ./agents\nnotify: ${notify}\n`)
  return s
}

test('31 item 2: a run that pauses is told to the webhook, ntfy-style: message, Title, Priority, Click, bearer token', async () => {
  const hook = await receiver()
  const s = setup(`{ url: "${hook.url}/tea-board-7f3a", token_file: ./ntfy-token, page_url: "http://board.lan:8765/" }`)
  const d = await startServe(['--data-dir', s.path('data'), '--config', s.path('serve.yaml')])
  try {
    assert.is((await d.json('POST', '/api/runs', { agent: 'review', run_id: 'r1', input: { topic: 'roses' } })).status, 201)
    const r = await hook.next()
    assert.is(r.method, 'POST')
    assert.is(r.headers.title, 'review waits for you')
    assert.is(r.headers.priority, '4')
    assert.is(r.headers.click, 'http://board.lan:8765/#run=r1', 'the run on the page, as the phone reaches it')
    assert.is(r.headers.authorization, 'Bearer tk_webhook_secret')
    assert.match(r.headers['content-type'] ?? '', /^text\/plain/)
    assert.equal(r.body.split('\n'), ['Check the note before it is sent', 'run r1 (review)', 'asks for: note, approved'])
    assert.is((await d.json('GET', '/api/runs/r1')).body.status, 'interrupted')
    // The answer resumes it; nothing more is sent for a run that completes.
    assert.is((await d.json('POST', '/api/runs/r1/resume', { input: { approved: true } })).status, 202)
    await d.waitLog(/run r1 completed/)
    assert.is((await d.json('GET', '/api/runs/r1')).body.state.sent, 'Note about roses')
    assert.is(hook.got.length, 1)
    assert.not.match(d.stderr(), 'tea-board-7f3a', 'the topic (a secret) is not logged')
  } finally {
    assert.is(await d.stop(), 0, d.stderr())
    await hook.close()
    s.cleanup()
  }
})

test('31 item 2: a webhook that hangs or fails is a log line after its timeout; the run pauses and the API answers', async () => {
  const hung = await receiver(() => {}) // never answers
  const s = setup(`{ url: "${hung.url}/t", timeout: 0.3 }`)
  const d = await startServe(['--data-dir', s.path('data'), '--config', s.path('serve.yaml')])
  const failing = await receiver((res) => {
    res.statusCode = 500
    res.end('down')
  })
  const s2 = setup(`{ url: "${failing.url}/t" }`)
  const d2 = await startServe(['--data-dir', s2.path('data'), '--config', s2.path('serve.yaml')])
  try {
    assert.is((await d.json('POST', '/api/runs', { agent: 'review', run_id: 'h1', input: { topic: 'x' } })).status, 201)
    await hung.next()
    await d.waitLog(/notify: cannot tell http:\/\/127\.0\.0\.1:\d+ that run h1 paused/)
    assert.is((await d.json('GET', '/api/runs/h1')).body.status, 'interrupted')
    // The click link falls back to the address tea serve listens on.
    assert.is(hung.got[0]!.headers.click, `${d.url}/#run=h1`)
    assert.is(hung.got[0]!.headers.authorization, undefined)

    assert.is((await d2.json('POST', '/api/runs', { agent: 'review', run_id: 'e1', input: { topic: 'x' } })).status, 201)
    await d2.waitLog(/notify: http:\/\/127\.0\.0\.1:\d+ answered 500 for run e1/)
    assert.is((await d2.json('GET', '/api/health')).body.ok, true)
  } finally {
    assert.is(await d.stop(), 0, d.stderr())
    assert.is(await d2.stop(), 0, d2.stderr())
    await hung.close()
    await failing.close()
    s.cleanup()
    s2.cleanup()
  }
})

test('31 item 2: a notify entry that is not a URL, gives token and token_file, or names a token file that is not there stops the start (exit 2)', async () => {
  for (const [entry, says] of [
    ['{ url: "ftp://x/y" }', 'must be an http:// or https:// URL'],
    ['{ url: "http://127.0.0.1:9/t", token: a, token_file: ./ntfy-token }', 'give token or token_file, not both'],
    ['{ url: "http://127.0.0.1:9/t", token_file: ./missing-token }', 'cannot read notify.token_file'],
  ] as const) {
    const s = setup(entry)
    const d = await startServe(['--data-dir', s.path('data'), '--config', s.path('serve.yaml')]).catch((e: Error) => e.message)
    assert.is(typeof d, 'string', 'tea serve did not start')
    assert.match(d as string, says)
    s.cleanup()
  }
})

test.run()
