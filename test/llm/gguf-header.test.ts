/**
 * Issue 30 item 4: a GGUF file is checked in JavaScript before llama.cpp sees it (src/llm/gguf/header.ts,
 * model-file.ts): a missing file, a file that is not GGUF, one cut short, a damaged header, an architecture the
 * llama.cpp tea carries does not run, and a model larger than free memory are each a coded error with the path
 * and the fix.
 */
import { readdirSync, readFileSync, truncateSync, writeFileSync, copyFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError, TeaError } from '../../src/core/errors.ts'
import { SUPPORTED_ARCHITECTURES } from '../../src/llm/gguf/architectures.ts'
import { readGgufHeader } from '../../src/llm/gguf/header.ts'
import { checkMemory, inspectGguf, memoryNeeded } from '../../src/llm/gguf/model-file.ts'
import { rng } from '../support/rng.ts'
import { skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'
import { ggufWithHeader, tinyGguf } from '../support/tiny-gguf.ts'

const dir = tempDir('tea-gguf-header-')

const u32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n)
  return b
}
const u64 = (n: number) => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64LE(BigInt(n))
  return b
}

function thrown(f: () => unknown): TeaError {
  try {
    f()
  } catch (e) {
    if (isTeaError(e)) return e
    throw e
  }
  throw new Error('expected an error')
}

test('30-4 the tiny model reads whole: its architecture, metadata, tensors, and data ending where the file ends', () => {
  const h = readGgufHeader(tinyGguf())
  assert.is(h.version, 3)
  assert.is(h.architecture, 'llama')
  assert.is(h.tensorCount, 2 + 2 * 9 + 1)
  assert.is(h.metadata.get('llama.context_length'), 2048)
  assert.is(h.metadata.get('llama.embedding_length'), 64)
  assert.equal(h.metadata.get('tokenizer.ggml.tokens'), { arrayLength: 356 })
  assert.match(String(h.metadata.get('tokenizer.chat_template')), '<|im_start|>')
  assert.is(h.dataEnd, h.fileSize)
  assert.is(h.dataOffset % 32, 0)
})

test('30-4 a GGUF without tensor data (a vocabulary-only file, as llama.cpp ships for its tests) ends with its header, unpadded', () => {
  const kv = Buffer.concat([u64(20), Buffer.from('general.architecture'), u32(8), u64(5), Buffer.from('llama')])
  const file = join(dir, 'vocab-only.gguf')
  writeFileSync(file, Buffer.concat([Buffer.from('GGUF'), u32(3), u64(0), u64(1), kv]))
  const h = readGgufHeader(file)
  assert.is(h.tensorCount, 0)
  assert.is(h.dataEnd, h.fileSize, 'not cut short for want of padding')
})

test('30-4 a missing file is GGUF_NOT_FOUND naming the path, with how to copy one there', () => {
  const e = thrown(() => inspectGguf(join(dir, 'nowhere.gguf')))
  assert.is(e.code, 'GGUF_NOT_FOUND')
  assert.match(e.message, join(dir, 'nowhere.gguf'))
  assert.match(String(e.hint), 'scp')
})

test('30-4 a file that is not GGUF is GGUF_NOT_GGUF before llama.cpp sees it', () => {
  const text = join(dir, 'model.gguf')
  writeFileSync(text, '{"not": "a model"}\n')
  const e = thrown(() => inspectGguf(text))
  assert.is(e.code, 'GGUF_NOT_GGUF')
  assert.match(e.message, `${text} is not a GGUF model file`)
  assert.match(String(e.hint), 'convert')
  writeFileSync(text, 'GG')
  assert.is(thrown(() => inspectGguf(text)).code, 'GGUF_NOT_GGUF', 'shorter than the magic')
})

test('30-4 a GGUF cut short (in its tensor data, in its metadata) is GGUF_TRUNCATED with both sizes', () => {
  const full = readFileSync(tinyGguf()).length
  for (const size of [Math.floor(full / 2), full - 1, 200, 30]) {
    const cut = join(dir, `cut-${size}.gguf`)
    copyFileSync(tinyGguf(), cut)
    truncateSync(cut, size)
    const e = thrown(() => inspectGguf(cut))
    assert.is(e.code, 'GGUF_TRUNCATED', `cut at ${size}: ${e.message}`)
    assert.match(e.message, `it is ${size} bytes`)
    assert.match(String(e.hint), 'copy the model file again')
  }
})

test('30-4 an architecture this llama.cpp does not run is GGUF_UNSUPPORTED_ARCH naming it', () => {
  const file = ggufWithHeader(join(dir, 'odd.gguf'), 'not-a-real-arch', 64)
  assert.is(readGgufHeader(file).architecture, 'not-a-real-arch', 'the header itself is sound')
  const e = thrown(() => inspectGguf(file))
  assert.is(e.code, 'GGUF_UNSUPPORTED_ARCH')
  assert.match(e.message, "architecture 'not-a-real-arch'")
  assert.is(inspectGguf(ggufWithHeader(join(dir, 'qwen.gguf'), 'qwen2', 64)).header.architecture, 'qwen2')
})

test('30-4 a model larger than free memory is GGUF_TOO_LARGE: "needs ~N MiB, M MiB free"', () => {
  // 16 Gi float32 values (64 GiB), on a sparse file: the header says so, the disk holds almost nothing.
  const file = ggufWithHeader(join(dir, 'huge.gguf'), 'llama', 16 * 1024 ** 3)
  const info = inspectGguf(file)
  const needed = memoryNeeded(info, 2048)
  assert.ok(needed > 64 * 1024 ** 3)
  const e = thrown(() => checkMemory(info, needed))
  assert.is(e.code, 'GGUF_TOO_LARGE')
  assert.match(e.message, /needs ~\d+ MiB of memory \(weights and context\), and \d+ MiB are free/)
  assert.match(String(e.hint), 'MemoryMax')
  checkMemory(inspectGguf(tinyGguf()), memoryNeeded(inspectGguf(tinyGguf()), 2048))
})

test('30-4 the KV cache grows the estimate with the context and the slots', () => {
  const info = inspectGguf(tinyGguf())
  const weights = info.header.dataEnd - info.header.dataOffset
  const one = memoryNeeded(info, 1024)
  // 2 layers × 1024 tokens × (64 + 64) values × 2 bytes
  assert.is(memoryNeeded(info, 2048) - one, 2 * 1024 * 128 * 2)
  assert.is(memoryNeeded(info, 1024, 2) - one, 2 * 1024 * 128 * 2)
  assert.ok(one > weights)
})

test('30-4 damaged headers are GGUF_INVALID: version 1, a big-endian file, counts larger than the file', () => {
  const tiny = readFileSync(tinyGguf())
  const v1 = Buffer.from(tiny)
  v1.writeUInt32LE(1, 4)
  writeFileSync(join(dir, 'v1.gguf'), v1)
  assert.match(thrown(() => readGgufHeader(join(dir, 'v1.gguf'))).message, 'version 1')
  const be = Buffer.from(tiny)
  be.writeUInt32BE(3, 4)
  writeFileSync(join(dir, 'be.gguf'), be)
  assert.is(thrown(() => readGgufHeader(join(dir, 'be.gguf'))).code, 'GGUF_INVALID')
  const counts = Buffer.from(tiny)
  counts.writeBigUInt64LE(1n << 40n, 16)
  writeFileSync(join(dir, 'counts.gguf'), counts)
  const e = thrown(() => readGgufHeader(join(dir, 'counts.gguf')))
  assert.is(e.code, 'GGUF_INVALID')
  assert.match(e.message, 'metadata count')
})

test('30-4 hostile headers: 300 random corruptions of the first 4 KiB are each a coded GGUF error or a sound header', () => {
  const tiny = readFileSync(tinyGguf())
  const random = rng(30)
  const file = join(dir, 'fuzz.gguf')
  const codes = new Set<string>()
  for (let i = 0; i < 300; i++) {
    const b = Buffer.from(tiny)
    for (let k = 0; k < 1 + Math.floor(random() * 8); k++) b[8 + Math.floor(random() * 4096)] = Math.floor(random() * 256)
    writeFileSync(file, b)
    try {
      readGgufHeader(file)
      codes.add('ok')
    } catch (e) {
      assert.ok(isTeaError(e) && e.code.startsWith('GGUF_'), `corruption ${i}: ${String(e)}`)
      codes.add(e.code)
    }
  }
  assert.ok(codes.size >= 2, [...codes].join(' '))
})

const libllama = (() => {
  const dir = resolve(import.meta.dirname, '../../node_modules/@node-llama-cpp/linux-x64/bins')
  try {
    const sub = readdirSync(dir)[0]
    const file = readdirSync(join(dir, sub!)).find((f) => /^libllama\..*so$/.test(f))
    return file ? join(dir, sub!, file) : undefined
  } catch {
    return undefined
  }
})()

skipIf(
  test,
  !libllama && 'the @node-llama-cpp/linux-x64 package is not installed',
  '30-4 every architecture tea accepts is named in the libllama it carries (a dependency update that drops one is noticed)',
  () => {
    const bytes = readFileSync(libllama!)
    const missing = [...SUPPORTED_ARCHITECTURES].filter((a) => !bytes.includes(Buffer.from(`${a}\0`)))
    assert.equal(missing, [])
    assert.ok(SUPPORTED_ARCHITECTURES.has('llama') && SUPPORTED_ARCHITECTURES.has('qwen2') && !SUPPORTED_ARCHITECTURES.has('clip'))
  },
)

test.run()
