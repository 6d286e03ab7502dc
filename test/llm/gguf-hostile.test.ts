/**
 * Issue 30 item 5: llama.cpp aborts the whole process (an assertion, a division by zero) on some files whose
 * header is sound but whose sizes no model has — found by fuzzing the tiny model's metadata: a block count, a
 * feed-forward size or a head count of 0 (or missing), tensor data not 32-byte aligned, a tensor dimension of 0, a
 * token written twice, a sentencepiece vocabulary without its 256 byte tokens. tea refuses those before llama.cpp
 * sees them. The files are loaded one after another in a child process, so that an abort shows as its signal instead
 * of taking the test runner down.
 */
import { spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { readFileSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tempDir } from '../support/temp-dir.ts'
import { tinyGguf, withMetadata } from '../support/tiny-gguf.ts'

const ROOT = resolve(import.meta.dirname, '../..')

test('30-5 files llama.cpp would abort on are GGUF_INVALID, and the process lives through every one', () => {
  const dir = tempDir('tea-gguf-hostile-')
  const cases: Array<[string, string, number, string]> = [
    ['blocks0', 'llama.block_count', 0, 'its llama.block_count is 0'],
    ['ff0', 'llama.feed_forward_length', 0, 'its llama.feed_forward_length is 0'],
    ['heads0', 'llama.attention.head_count', 0, 'its llama.attention.head_count is 0'],
    ['kv0', 'llama.attention.head_count_kv', 0, 'its llama.attention.head_count_kv is 0'],
    ['kv3', 'llama.attention.head_count_kv', 3, '4 attention heads do not share 3 key-value heads'],
    ['align1', 'general.alignment', 1, 'not 32-byte aligned'],
  ]
  for (const [name, key, value] of cases) withMetadata(tinyGguf(), join(dir, `${name}.gguf`), key, value)
  // Byte patches of the same length: a token written twice, a byte token missing, a key missing, a dimension of 0.
  const tiny = readFileSync(tinyGguf())
  const patch = (name: string, find: string, edit: (b: Buffer, at: number) => void): void => {
    const b = Buffer.from(tiny)
    const at = b.indexOf(find)
    assert.ok(at > 0, find)
    edit(b, at)
    writeFileSync(join(dir, `${name}.gguf`), b)
  }
  patch('twice', '<0xBC>', (b, at) => b.write('<0xBB>', at))
  patch('nobyte', '<0xBC>', (b, at) => b.write('<0xbc>', at))
  patch('noff', 'llama.feed_forward_length', (b, at) => b.write('llama.feed_forward_lengtX', at))
  patch('dim0', 'output_norm.weight', (b, at) => b.writeBigUInt64LE(0n, at + 'output_norm.weight'.length + 4))
  cases.push(
    ['twice', '', 0, 'its vocabulary holds the token "<0xBB>" twice'],
    ['nobyte', '', 0, 'has 255 of the 256 byte tokens'],
    ['noff', '', 0, 'it lacks llama.feed_forward_length'],
    ['dim0', '', 0, 'tensor output_norm.weight has a dimension of 0'],
  )
  const script = join(dir, 'load.mts')
  writeFileSync(
    script,
    `import { createLlmClient } from ${JSON.stringify(join(ROOT, 'src/llm/client.ts'))}
for (const name of process.argv.slice(2)) {
  const llm = createLlmClient({ env: {}, defaults: { model: 'gguf:' + name + '.gguf', model_dir: ${JSON.stringify(dir)}, threads: 1 } })
  try {
    await llm.call({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 })
    console.log(JSON.stringify({ name, ok: true }))
  } catch (e) {
    console.log(JSON.stringify({ name, code: e.code, message: e.message }))
  }
}
`,
  )
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...cases.map((c) => c[0])], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.is(r.signal, null, `llama.cpp took the process down: ${r.stderr.slice(-500)}`)
  assert.is(r.status, 0, r.stderr)
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { name: string; code?: string; message?: string })
  for (const [name, , , message] of cases) {
    const line = lines.find((l) => l.name === name)
    assert.is(line?.code, 'GGUF_INVALID', `${name}: ${JSON.stringify(line)}`)
    assert.match(String(line?.message), message)
  }
})

test.run()
