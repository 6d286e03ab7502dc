/**
 * Issue 30 item 4: `tea doctor agent.yaml` checks each GGUF model the agent names — it exists, it is a whole GGUF,
 * its architecture is one this llama.cpp runs, and its size against free memory ("needs ~N MiB, M MiB free") —
 * from the file's header, without loading llama.cpp; an agent that names only GGUF models is not told to start a
 * model server.
 */
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, truncateSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ggufWithHeader, tinyGguf } from '../support/tiny-gguf.ts'
import { BUNDLE, bundleEnv, collect, scratch, type Result } from './cli.ts'

const ROOT = resolve(import.meta.dirname, '../..')

function doctor(args: string[]): Promise<Result> {
  const child = spawn(process.execPath, [BUNDLE, 'doctor', ...args], {
    cwd: ROOT,
    env: bundleEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  return collect(child, { timeoutMs: 60_000 })
}

const agent = (llm: string) => `name: a\nsettings:\n  llm:\n${llm}nodes:\n  - name: ask\n    uses: llm.call\n    with: { prompt: hi }\n`

interface Check {
  name: string
  ok: boolean
  detail: string
  fix?: string
}

async function checks(dir: string, file: string): Promise<{ r: Result; gguf: Check[]; names: string[] }> {
  const r = await doctor([join(dir, file), '--data-dir', join(dir, 'data'), '--json'])
  const all = (JSON.parse(r.stdout) as { checks: Check[] }).checks
  return { r, gguf: all.filter((c) => c.name.startsWith('gguf ')), names: all.map((c) => c.name) }
}

test('30-4 tea doctor: a good GGUF model passes with its architecture and "needs ~N MiB ..., M MiB free"; no model server asked for', async () => {
  const s = scratch({ 'agent.yaml': agent('    model: gguf:models/tiny.gguf\n    n_ctx: 1024\n') })
  mkdirSync(s.path('models'))
  copyFileSync(tinyGguf(), s.path('models/tiny.gguf'))
  const { r, gguf, names } = await checks(s.dir, 'agent.yaml')
  assert.is(r.code, 0, r.stdout + r.stderr)
  assert.is(gguf.length, 1)
  assert.ok(gguf[0]!.ok)
  assert.match(gguf[0]!.detail, s.path('models/tiny.gguf'))
  assert.match(gguf[0]!.detail, /\(llama, 1 MiB file\) needs ~\d+ MiB with a 1024-token context, \d+ MiB free/)
  assert.not.ok(names.includes('model server'), 'an agent with only GGUF models needs no Ollama')
  const text = await doctor([s.path('agent.yaml'), '--data-dir', s.path('data')])
  assert.match(text.stdout, '✓ gguf tiny.gguf:')
  s.cleanup()
})

test('30-4 tea doctor: missing, cut short, unknown architecture, too large and provider local without a file are each ✗ with the fix', async () => {
  const s = scratch({
    'missing.yaml': agent('    model: gguf:nowhere.gguf\n'),
    'cut.yaml': agent('    model: gguf:cut.gguf\n'),
    'odd.yaml': agent('    provider: local\n    model_path: odd.gguf\n'),
    'huge.yaml': agent('    backend: local\n    model_path: huge.gguf\n'),
    'local.yaml': agent('    backend: local\n'),
  })
  copyFileSync(tinyGguf(), s.path('cut.gguf'))
  truncateSync(s.path('cut.gguf'), 50_000)
  ggufWithHeader(s.path('odd.gguf'), 'nonesuch', 64)
  ggufWithHeader(s.path('huge.gguf'), 'llama', 16 * 1024 ** 3)
  const expect: Array<[string, RegExp, RegExp]> = [
    ['missing.yaml', /GGUF_NOT_FOUND: the GGUF model .*nowhere\.gguf does not exist/, /scp/],
    ['cut.yaml', /GGUF_TRUNCATED: .* is cut short: it is 50000 bytes/, /copy the model file again/],
    ['odd.yaml', /GGUF_UNSUPPORTED_ARCH: .*architecture 'nonesuch'/, /architecture llama.cpp runs/],
    ['huge.yaml', /huge\.gguf \(llama, 65537 MiB file\) needs ~\d+ MiB with a 2048-token context, \d+ MiB free/, /MemoryMax/],
    ['local.yaml', /provider: local names no GGUF model file/, /model_path/],
  ]
  for (const [file, detail, fix] of expect) {
    const { r, gguf } = await checks(s.dir, file)
    assert.is(r.code, 1, `${file}: ${r.stdout}`)
    assert.is(gguf.length, 1, file)
    assert.not.ok(gguf[0]!.ok, file)
    assert.match(gguf[0]!.detail, detail, `${file}: ${gguf[0]!.detail}`)
    assert.match(String(gguf[0]!.fix), fix, `${file}: ${gguf[0]!.fix}`)
  }
  s.cleanup()
})

test.run()
