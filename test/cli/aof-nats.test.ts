/**
 * `tea aof task create|list|show|move` on the JetStream store (`--nats URL` or `TEA_NATS_URL`), in-process against a
 * real nats-server; and the one-line failure when the server is not there.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryIo } from '../../src/cli/io.ts'
import { main } from '../../src/cli/main.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'

const missing = natsServerMissing()
let server: NatsServer | undefined
const dir = mkdtempSync(join(tmpdir(), 'tea-aof-nats-cli-'))

async function run(argv: string[], env: Record<string, string> = {}) {
  const io = memoryIo({ cwd: dir, env: { TEA_NATS_PROJECT: `cli${process.pid}`, ...env } })
  const code = await main(['aof', 'task', ...argv], io)
  return { code, out: io.stdout, err: io.stderr }
}

test.before(async () => {
  if (!missing) server = await startNatsServer()
})
test.after(async () => {
  await server?.cleanup()
  rmSync(dir, { recursive: true, force: true })
})

skipIf(test, missing, 'create, list, show and move a task with --nats; TEA_NATS_URL does the same; the data dir stays empty', async () => {
  const url = server!.url
  const created = await run(['create', '--title', 'Calibrate', '--status', 'ready', '--agent', 'swe', '--nats', url])
  assert.is(created.code, 0, created.err)
  const id = created.out.trim()
  const listed = await run(['list', '--json'], { TEA_NATS_URL: url })
  assert.equal(
    JSON.parse(listed.out).map((r: { id: string; status: string; agent: string }) => [r.id, r.status, r.agent]),
    [[id, 'ready', 'swe']],
  )
  const shown = await run(['show', id, '--nats', url])
  assert.is(shown.code, 0)
  assert.match(shown.out, `id: ${id}`)
  assert.match(shown.out, 'status: ready')
  const moved = await run(['move', id, 'blocked', '--reason', 'waiting', '--nats', url])
  assert.is(moved.out, `${id}: ready -> blocked\n`)
  const refused = await run(['move', id, 'done', '--nats', url])
  assert.is(refused.code, 1)
  assert.match(refused.err, 'cannot move from blocked to done')
  // Nothing went to the filesystem store.
  assert.is((await run(['list'], {})).out, '')
})

test('an unreachable server: exit 1 and one line naming the URL', async () => {
  const r = await run(['list', '--nats', 'nats://127.0.0.1:1'])
  assert.is(r.code, 1)
  assert.match(r.err, 'cannot reach NATS at nats://127.0.0.1:1: connection refused')
  assert.is(r.err.trim().split('\n').length, 1, r.err)
})

test.run()
