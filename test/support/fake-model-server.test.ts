import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLlmClient } from '../../src/llm/client.ts'
import { startFakeModelServer } from './fake-model-server.ts'
import { tempDir } from './temp-dir.ts'

const SERVER = fileURLToPath(new URL('./fake-model-server.ts', import.meta.url))

test('answers /api/version and /api/tags, and matches steps by message text', async () => {
  const server = await startFakeModelServer({ models: ['qwen2.5:1.5b'] })
  try {
    const version = (await (await fetch(`${server.url}/api/version`)).json()) as { version: string }
    const tags = (await (await fetch(`${server.url}/api/tags`)).json()) as { models: Array<{ name: string }> }
    assert.is(typeof version.version, 'string')
    assert.equal(
      tags.models.map((m) => m.name),
      ['qwen2.5:1.5b'],
    )
    server.script({ match: 'beta', content: 'B' }, { match: 'alpha', content: 'A', repeat: true })
    const client = createLlmClient({ env: { OLLAMA_HOST: server.url } })
    const ask = (content: string) => client.call({ model: 'ollama:m', messages: [{ role: 'user', content }] })
    assert.equal([(await ask('alpha')).content, (await ask('beta')).content, (await ask('alpha again')).content], ['A', 'B', 'A'])
    assert.is(server.pending(), 1)
  } finally {
    await server.close()
  }
})

test('an unscripted request gets HTTP 400 naming the problem, so the test fails fast', async () => {
  const server = await startFakeModelServer()
  try {
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{"model":"m","messages":[]}' })
    assert.is(res.status, 400)
    assert.match(await res.text(), 'no scripted reply left')
  } finally {
    await server.close()
  }
})

test('/api/generate answers with `response` fields', async () => {
  const server = await startFakeModelServer()
  try {
    server.script({ content: 'generated text' })
    const res = await fetch(`${server.url}/api/generate`, { method: 'POST', body: '{"model":"m","prompt":"p","stream":false}' })
    const body = (await res.json()) as { response: string; done: boolean }
    assert.equal([body.response, body.done], ['generated text', true])
  } finally {
    await server.close()
  }
})

test('runs standalone: prints its URL first, follows the script file, logs requests, stops on SIGTERM', async () => {
  const dir = tempDir('tea-fake-server-')
  const script = join(dir, 'script.json')
  const requests = join(dir, 'requests.jsonl')
  writeFileSync(
    script,
    JSON.stringify({
      replies: [{ status: 503, headers: { 'Retry-After': '0' } }, { content: { answer: 42 } }],
      fallback: { content: 'fallback' },
    }),
  )
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, '--port', '0', '--script', script, '--requests', requests], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString()
        if (out.includes('\n')) resolve(out.split('\n')[0]!)
      })
      child.once('exit', (code) => reject(new Error(`fake server exited early with ${code}`)))
    })
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
    const client = createLlmClient({ env: { OLLAMA_HOST: url }, backoffBaseMs: 1 })
    const r = await client.call({ model: 'ollama:m', messages: [{ role: 'user', content: 'q' }], format: 'json' })
    assert.equal([r.parsed, r.attempts], [{ answer: 42 }, 2])
    const again = await client.call({ model: 'ollama:m', messages: [{ role: 'user', content: 'q2' }] })
    assert.is(again.content, 'fallback')
    const logged = readFileSync(requests, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    // The call scheduler asks the server which models it holds (/api/ps) once, before the first call.
    assert.equal(
      logged.map((l) => [l.path, l.body?.messages[0].content]),
      [
        ['/api/ps', undefined],
        ['/api/chat', 'q'],
        ['/api/chat', 'q'],
        ['/api/chat', 'q2'],
      ],
    )
  } finally {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    assert.is(await exited, 0)
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
