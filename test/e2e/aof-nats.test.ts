/**
 * `tea aof task … --nats` from the built bundle (`node dist/linux-x64/tea.cjs`) against a real nats-server: the
 * NATS client, loaded by a dynamic import inside the one-file bundle, connects and works as from source; and
 * `tea aof import` / `export` through it, the object store included.
 */

import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { natsServerForFile, natsServerMissing } from '../support/nats-server.ts'
import { skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'
import { BUNDLE, bundleEnv } from './cli.ts'

function tea(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return aof(['task', ...args], env)
}

function aof(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const c = spawn(process.execPath, [BUNDLE, 'aof', ...args], { env: bundleEnv({ TEA_DATA_DIR: '', ...env }) })
    let out = ''
    let err = ''
    c.stdout.on('data', (b) => (out += b))
    c.stderr.on('data', (b) => (err += b))
    c.on('exit', (code) => done({ code, out, err }))
  })
}

const missing = natsServerMissing()
const natsFile = natsServerForFile(test, missing)

skipIf(test, missing, 'the bundle creates, lists and moves a task on NATS (TEA_NATS_URL)', async () => {
  assert.ok(existsSync(BUNDLE), `${BUNDLE} is missing: node build.mjs --target linux-x64`)
  const env = { TEA_NATS_URL: natsFile.server.url, TEA_NATS_PROJECT: 'e2e' }
  const created = await tea(['create', '--title', 'From the bundle', '--status', 'ready'], env)
  assert.is(created.code, 0, created.err)
  const id = created.out.trim()
  const listed = await tea(['list'], env)
  assert.is(listed.out, `${id}  ready        From the bundle\n`)
  const moved = await tea(['move', id, 'in-progress'], env)
  assert.is(moved.out, `${id}: ready -> in-progress\n`)
})

skipIf(
  test,
  missing,
  'the bundle imports a folder project with a companion file onto NATS and exports it back (object store)',
  async () => {
    const dir = tempDir('tea-e2e-nats-copy-')
    try {
      const env = { TEA_NATS_URL: natsFile.server.url, TEA_NATS_PROJECT: 'e2ecopy' }
      const a = join(dir, 'a')
      const id = (await aof(['task', 'create', '--title', 'Copied', '--status', 'ready', '--data-dir', a], { TEA_DATA_DIR: a })).out.trim()
      const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 13) % 256))
      mkdirSync(join(a, 'tasks', 'ready', id, 'outputs'), { recursive: true })
      writeFileSync(join(a, 'tasks', 'ready', id, 'outputs', 'big.bin'), bytes)
      const up = await aof(['import', '--data-dir', a], env)
      assert.is(up.code, 0, up.err)
      assert.equal([JSON.parse(up.out).tasks.created, JSON.parse(up.out).files], [1, 1])
      const b = join(dir, 'b')
      const down = await aof(['export', '--data-dir', b], env)
      assert.is(down.code, 0, down.err)
      assert.ok(readFileSync(join(b, 'tasks', 'ready', id, 'outputs', 'big.bin')).equals(bytes))
      assert.is(readFileSync(join(b, 'tasks', 'ready', `${id}.md`), 'utf8'), readFileSync(join(a, 'tasks', 'ready', `${id}.md`), 'utf8'))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  },
)

test('the bundle: an unreachable NATS server is exit 1 and one line naming it', async () => {
  const r = await tea(['list', '--nats', 'nats://127.0.0.1:1'])
  assert.is(r.code, 1)
  assert.is(r.err, 'tea aof task list: NATS_CONNECT: cannot reach NATS at nats://127.0.0.1:1: connection refused\n')
})

skipIf(test, missing, 'the bundle queues a message with send --no-route and a router service routes it (route --once)', async () => {
  const dir = tempDir('tea-e2e-nats-route-')
  try {
    const env = { TEA_NATS_URL: natsFile.server.url, TEA_NATS_PROJECT: 'e2eroute' }
    const id = (await tea(['create', '--title', 'Routed', '--status', 'ready', '--agent', 'swe'], env)).out.trim()
    assert.is((await aof(['lease', id, '--agent', 'swe'], env)).code, 0)
    const file = join(dir, 'msg.json')
    const payload = { taskId: id, agentId: 'swe', progress: 'queued then routed' }
    const msg = {
      protocol: 'aof',
      version: 1,
      type: 'status.update',
      taskId: id,
      fromAgent: 'swe',
      toAgent: 'o',
      sentAt: '2026-11-25T10:00:00Z',
      payload,
    }
    writeFileSync(file, JSON.stringify(msg))
    const queued = await aof(['send', '--no-route', file], env)
    assert.is(JSON.parse(queued.out).outcome, 'queued', queued.err)
    assert.not.match((await tea(['show', id], env)).out, 'queued then routed')
    const routed = await aof(['route', '--once'], env)
    assert.is(routed.code, 0, routed.err)
    const line = JSON.parse(routed.out)
    assert.equal([line.outcome, line.taskId, line.delivery], ['accepted', id, 1])
    assert.match((await tea(['show', id], env)).out, 'Progress: queued then routed')
    assert.match(routed.err, '1 message(s) (1 accepted); nothing left')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
