/**
 * `tea aof task … --nats` from the built bundle (`node dist/linux-x64/tea.cjs`) against a real nats-server: the
 * NATS client, loaded by a dynamic import inside the one-file bundle, connects and works as from source.
 */

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'

const BUNDLE = resolve(import.meta.dirname, '../../dist/linux-x64/tea.cjs')

function tea(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const c = spawn(process.execPath, [BUNDLE, 'aof', 'task', ...args], { env: { ...process.env, TEA_DATA_DIR: '', ...env } })
    let out = ''
    let err = ''
    c.stdout.on('data', (b) => (out += b))
    c.stderr.on('data', (b) => (err += b))
    c.on('exit', (code) => done({ code, out, err }))
  })
}

let server: NatsServer | undefined
const missing = natsServerMissing()
test.before(async () => {
  if (!missing) server = await startNatsServer()
})
test.after(async () => {
  await server?.cleanup()
})

skipIf(test, missing, 'the bundle creates, lists and moves a task on NATS (TEA_NATS_URL)', async () => {
  assert.ok(existsSync(BUNDLE), `${BUNDLE} is missing: node build.mjs --target linux-x64`)
  const env = { TEA_NATS_URL: server!.url, TEA_NATS_PROJECT: 'e2e' }
  const created = await tea(['create', '--title', 'From the bundle', '--status', 'ready'], env)
  assert.is(created.code, 0, created.err)
  const id = created.out.trim()
  const listed = await tea(['list'], env)
  assert.is(listed.out, `${id}  ready        From the bundle\n`)
  const moved = await tea(['move', id, 'in-progress'], env)
  assert.is(moved.out, `${id}: ready -> in-progress\n`)
})

test('the bundle: an unreachable NATS server is exit 1 and one line naming it', async () => {
  const r = await tea(['list', '--nats', 'nats://127.0.0.1:1'])
  assert.is(r.code, 1)
  assert.is(r.err, 'tea aof task list: NATS_CONNECT: cannot reach NATS at nats://127.0.0.1:1: connection refused\n')
})

test.run()
