/**
 * `tea doctor` (issue 16): every check a line with ✓/✗ and the fix, exit 0/1, `--json`. The model-server checks
 * go to the fake model server over real HTTP, as they would to Ollama.
 */

import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { clockCheck, dataDirCheck, glibcCheck, memoryCheck } from '../../../src/cli/doctor/checks.ts'
import { memoryIo } from '../../../src/cli/io.ts'
import { main } from '../../../src/cli/main.ts'
import { startFakeModelServer } from '../../support/fake-model-server.ts'
import { tempDir } from '../../support/temp-dir.ts'

const AGENT = (model: string) => `name: asker
settings:
  llm: { model: "ollama:${model}" }
nodes:
  - name: ask
    uses: llm.call
    with: { prompt: "hi", model: "ollama:helper:1b" }
`

function dir(): string {
  return tempDir('tea-doctor-')
}

async function doctor(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const io = memoryIo({ env: { ...env, TEA_CACHE_DIR: join(cwd, 'cache') }, cwd })
  const code = await main(['doctor', '--data-dir', join(cwd, 'data'), ...args], io)
  return { code, out: io.stdout, err: io.stderr }
}

test('16 doctor: all checks pass against a model server that has every model the agent names (exit 0)', async () => {
  const server = await startFakeModelServer({ models: ['qwen2.5:1.5b', 'helper:1b'], modelSizes: { 'qwen2.5:1.5b': 986_000_000 } })
  const cwd = dir()
  writeFileSync(join(cwd, 'agent.yaml'), AGENT('qwen2.5:1.5b'))
  try {
    const r = await doctor(['agent.yaml'], { OLLAMA_HOST: server.url }, cwd)
    assert.is(r.code, 0, r.out)
    assert.match(r.out, new RegExp(`^✓ model server: Ollama 0\\.0\\.0-fake at ${server.url.replace(/[.]/g, '\\.')}, 2 models pulled$`, 'm'))
    assert.match(r.out, /^✓ models pulled: qwen2\.5:1\.5b, helper:1b$/m)
    assert.match(r.out, /^✓ data dir: .* is writable and fsync works/m)
    assert.match(r.out, /^✓ agent agent\.yaml: 1 nodes$/m)
    assert.match(r.out, /all checks passed\n$/)
    for (const line of r.out.trim().split('\n').slice(0, -1)) assert.match(line, /^[✓✗] /)
    assert.is(server.requests.filter((q) => q.path === '/api/chat').length, 0, 'doctor asks; it never calls a model')
  } finally {
    await server.close()
    rmSync(cwd, { recursive: true, force: true })
  }
})

test('16 doctor: a model not pulled is a ✗ with the exact ollama pull line; --json has every check (exit 1)', async () => {
  const server = await startFakeModelServer({ models: ['helper:1b'] })
  const cwd = dir()
  writeFileSync(join(cwd, 'agent.yaml'), AGENT('qwen2.5:1.5b'))
  try {
    const r = await doctor(['agent.yaml'], { OLLAMA_HOST: server.url }, cwd)
    assert.is(r.code, 1)
    assert.match(r.out, /^✗ models pulled: not pulled: qwen2\.5:1\.5b\n {4}fix: ollama pull qwen2\.5:1\.5b$/m)
    assert.match(r.out, /1 of 8 checks failed/)
    const j = await doctor(['agent.yaml', '--json'], { OLLAMA_HOST: server.url }, cwd)
    assert.is(j.code, 1)
    const report = JSON.parse(j.out)
    assert.is(report.ok, false)
    assert.equal(
      report.checks.map((c: any) => c.name),
      ['model server', 'models pulled', 'memory', 'data dir', 'cache dir', 'glibc', 'clock', 'agent agent.yaml'],
    )
    assert.equal(report.checks[1], {
      name: 'models pulled',
      ok: false,
      detail: 'not pulled: qwen2.5:1.5b',
      fix: 'ollama pull qwen2.5:1.5b',
    })
  } finally {
    await server.close()
    rmSync(cwd, { recursive: true, force: true })
  }
})

test('16 doctor: no model server, an invalid agent: each a ✗ with its fix', async () => {
  const cwd = dir()
  writeFileSync(join(cwd, 'bad.yaml'), 'name: bad\nnodes:\n  - name: a\n    uses: no.such\n')
  // A port nothing listens on: one the fake server had, closed again.
  const gone = await startFakeModelServer()
  await gone.close()
  try {
    const r = await doctor(['bad.yaml'], { OLLAMA_HOST: gone.url }, cwd)
    assert.is(r.code, 1)
    assert.match(
      r.out,
      new RegExp(`^✗ model server: no answer from ${gone.url.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\)\n {4}fix: start it`, 'm'),
    )
    assert.match(r.out, /^✗ agent bad\.yaml: AGENT_INVALID: .*\n {4}fix: tea validate bad\.yaml lists every problem$/m)
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
})

test('16 doctor checks: memory below the model size, old glibc, a clock in 1970 or behind the data dir', () => {
  const server = { url: 'x', version: '1', models: new Map([['big:7b', 4_000_000_000]]) }
  const low = memoryCheck(server, ['big:7b'], 1_000_000_000)
  assert.is(low.ok, false)
  assert.match(low.detail, /954 MB available; big:7b needs about 4578 MB/)
  assert.ok(memoryCheck(server, ['big:7b'], 8_000_000_000).ok)
  assert.equal(glibcCheck('2.31').ok, false)
  assert.match(glibcCheck('2.31').fix!, /glibc >= 2\.34/)
  assert.ok(glibcCheck('2.36').ok)
  assert.is(glibcCheck(null).ok, false)
  const cwd = dir()
  try {
    assert.is(clockCheck(cwd, 0).ok, false)
    assert.ok(clockCheck(cwd, Date.UTC(2026, 0, 1)).ok)
    writeFileSync(join(cwd, 'tea.lmdb'), '')
    const behind = clockCheck(cwd, Date.now() - 3600_000)
    assert.is(behind.ok, false)
    assert.match(behind.detail, /behind the data dir's last write/)
    const made = join(cwd, 'not-yet')
    assert.ok(dataDirCheck(made).ok)
    assert.not.ok(existsSync(made), 'doctor leaves no data dir behind')
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
})

test.run()
