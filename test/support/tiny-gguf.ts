/**
 * GGUF files for tests: the tiny random-weight model scripts/tiny-gguf.mjs writes (a real model llama.cpp loads and
 * runs), made once per test process in a temp dir, and hand-made headers for the bad files a board may hold.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { tempDir } from './temp-dir.ts'

const ROOT = resolve(import.meta.dirname, '../..')
let dir: string | undefined

/** The tiny chat model (or, with `embedding`, the same marked for mean pooling); written at the first call. */
export function tinyGguf(embedding = false): string {
  dir ??= tempDir('tea-gguf-')
  const file = join(dir, embedding ? 'tiny-embed.gguf' : 'tiny.gguf')
  if (!existsSync(file)) execFileSync(process.execPath, [join(ROOT, 'scripts/tiny-gguf.mjs'), file, ...(embedding ? ['--embedding'] : [])])
  return file
}

/**
 * A GGUF header with `general.architecture` = `arch`, a one-layer model's sizes, and one f32 tensor of `values` values, its data `dataBytes`
 * long (default: all of it; less makes a truncated file). A large `values` with the file extended sparsely makes
 * a model that claims more memory than the machine has without taking the disk.
 */
export function ggufWithHeader(path: string, arch: string, values: number, dataBytes = values * 4): string {
  const parts: Buffer[] = []
  const u32 = (n: number) => {
    const b = Buffer.alloc(4)
    b.writeUInt32LE(n)
    parts.push(b)
  }
  const u64 = (n: number) => {
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(BigInt(n))
    parts.push(b)
  }
  const str = (s: string) => {
    u64(Buffer.byteLength(s))
    parts.push(Buffer.from(s))
  }
  // The sizes a dense model always gives (src/llm/gguf/model-file.ts refuses one without them).
  const sizes = ['block_count', 'embedding_length', 'feed_forward_length', 'attention.head_count']
  parts.push(Buffer.from('GGUF'))
  u32(3)
  u64(1)
  u64(1 + sizes.length)
  str('general.architecture')
  u32(8)
  str(arch)
  for (const key of sizes) {
    str(`${arch}.${key}`)
    u32(4)
    u32(key === 'block_count' || key === 'attention.head_count' ? 1 : 64)
  }
  str('token_embd.weight')
  u32(1)
  u64(values)
  u32(0)
  u64(0)
  const head = Buffer.concat(parts)
  const padded = Math.ceil(head.length / 32) * 32
  writeFileSync(path, Buffer.concat([head, Buffer.alloc(padded - head.length)]))
  // Extending a file with truncate leaves a hole: no disk is taken for the claimed data.
  if (dataBytes > 0) truncateSync(path, padded + dataBytes)
  return path
}

/** A copy of the GGUF `from` with the uint32 metadata value of `key` set to `value`, written to `to`. */
export function withMetadata(from: string, to: string, key: string, value: number): string {
  const b = readFileSync(from)
  const k = Buffer.from(key)
  // The key as GGUF writes it: its uint64 length before it, the uint32 type (4) after it, then the value.
  for (let i = b.indexOf(k); i !== -1; i = b.indexOf(k, i + 1)) {
    if (i >= 8 && b.readBigUInt64LE(i - 8) === BigInt(k.length) && b.readUInt32LE(i + k.length) === 4) {
      b.writeUInt32LE(value, i + k.length + 4)
      writeFileSync(to, b)
      return to
    }
  }
  throw new Error(`${from} has no uint32 metadata ${key}`)
}
