/**
 * Reads a GGUF file's header in JavaScript, with bounds, before llama.cpp sees the file: llama.cpp may abort the
 * whole process on a damaged file, so what it is given has been checked here first.
 *
 * The format (GGUF v2 and v3, little-endian): the magic `GGUF`; a uint32 version; uint64 tensor and metadata
 * counts; the metadata, each a string key, a uint32 value type and the value (a string is a uint64 length and
 * UTF-8 bytes; an array is an item type, a uint64 count and the items); the tensor infos, each a name, a uint32
 * dimension count, uint64 dimensions, a uint32 ggml type and a uint64 offset into the data; then, at the next
 * multiple of `general.alignment` (default 32), the tensor data. Every length and count is checked against what
 * is left of the file before anything is read or allocated, and the tensors' data must lie inside the file:
 * a file cut short (an interrupted copy) is found here, not by llama.cpp.
 *
 * Only what tea uses is kept: scalar metadata (strings up to 4 KiB), array lengths, and the tensors' extent.
 */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { TeaError, errorMessage } from '../../core/errors.ts'

export interface GgufHeader {
  version: number
  /** `general.architecture`. */
  architecture: string
  /** Scalar metadata by key (numbers, booleans, strings up to 4 KiB); arrays as their length. */
  metadata: Map<string, string | number | boolean | bigint | { arrayLength: number }>
  tensorCount: number
  /** What llama.cpp assumes of `tokenizer.ggml.tokens`: no token twice; the byte tokens `<0x00>`…`<0xFF>` present. */
  vocabulary: { duplicate?: string; byteTokens: number }
  /** Where the tensor data starts, bytes from the start of the file. */
  dataOffset: number
  /** Where the last tensor's data ends: the least size the file must have. */
  dataEnd: number
  fileSize: number
}

const MAGIC = 0x46554747 // "GGUF" read as a little-endian uint32
/** A header past this is not a model tea should load (the largest vocabularies' metadata is tens of MiB). */
const MAX_HEADER_BYTES = 256 * 1024 * 1024
const MAX_KEPT_STRING = 4096
const MAX_TENSORS = 1_000_000
const MAX_DIMS = 4
const WINDOW = 1024 * 1024

/** Value types: uint8 int8 uint16 int16 uint32 int32 float32 bool string array uint64 int64 float64. */
const SCALAR_BYTES: Readonly<Record<number, number>> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 }
const STRING = 8
const ARRAY = 9

/** ggml's TENSOR_ALIGNMENT: where a memory-mapped tensor's data may start. */
const LLAMA_ALIGNMENT = 32

/** The highest ggml type number llama.cpp may know (GGML_TYPE_COUNT is 41 in the llama.cpp tea carries). */
const MAX_GGML_TYPE = 63

/** ggml tensor types: [bytes per block, values per block]; types llama.cpp no longer has are left out. */
const GGML_TYPES: Readonly<Record<number, readonly [number, number]>> = {
  0: [4, 1], // f32
  1: [2, 1], // f16
  2: [18, 32], // q4_0
  3: [20, 32], // q4_1
  6: [22, 32], // q5_0
  7: [24, 32], // q5_1
  8: [34, 32], // q8_0
  9: [36, 32], // q8_1
  10: [84, 256], // q2_K
  11: [110, 256], // q3_K
  12: [144, 256], // q4_K
  13: [176, 256], // q5_K
  14: [210, 256], // q6_K
  15: [292, 256], // q8_K
  16: [66, 256], // iq2_xxs
  17: [74, 256], // iq2_xs
  18: [98, 256], // iq3_xxs
  19: [50, 256], // iq1_s
  20: [18, 32], // iq4_nl
  21: [110, 256], // iq3_s
  22: [82, 256], // iq2_s
  23: [136, 256], // iq4_xs
  24: [1, 1], // i8
  25: [2, 1], // i16
  26: [4, 1], // i32
  27: [8, 1], // i64
  28: [8, 1], // f64
  29: [56, 256], // iq1_m
  30: [2, 1], // bf16
  34: [54, 256], // tq1_0
  35: [66, 256], // tq2_0
  39: [17, 32], // mxfp4
}

/** Reads and checks the header of the GGUF file at `path` (an absolute path). Throws GGUF_* errors. */
export function readGgufHeader(path: string): GgufHeader {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (e) {
    const code = (e as { code?: string }).code
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new TeaError('GGUF_NOT_FOUND', `the GGUF model ${path} does not exist`, {
        details: { path },
        hint: 'copy the model file there (scp model.gguf board:/path/), or fix the path: gguf:<path> or settings.llm.model_path, relative to the agent file',
      })
    throw new TeaError('GGUF_NOT_FOUND', `the GGUF model ${path} cannot be read: ${errorMessage(e)}`, {
      details: { path },
      hint: 'give the user tea runs as read access to the file',
    })
  }
  try {
    const size = fstatSync(fd).size
    if (!fstatSync(fd).isFile()) throw invalid(path, 'it is not a regular file')
    return parse(new Cursor(fd, size, path))
  } finally {
    closeSync(fd)
  }
}

function parse(c: Cursor): GgufHeader {
  if (c.size < 4 || c.u32() !== MAGIC) throw notGguf(c.path, c.size)
  if (c.size < 24) throw truncated(c.path, c.size, 24, 'its header')
  const version = c.u32()
  if (version === 1) throw invalid(c.path, 'it is GGUF version 1, which llama.cpp no longer reads; convert the model again')
  // A big-endian file reads as a huge version number here.
  if (version !== 2 && version !== 3) throw invalid(c.path, `it is GGUF version ${version}; llama.cpp reads versions 2 and 3`)
  const tensorCount = c.count('tensor count', MAX_TENSORS)
  const kvCount = c.count('metadata count', MAX_HEADER_BYTES / 16)
  const metadata: GgufHeader['metadata'] = new Map()
  const vocabulary: GgufHeader['vocabulary'] = { byteTokens: 0 }
  for (let i = 0; i < kvCount; i++) {
    const key = c.string(MAX_KEPT_STRING, 'a metadata key')
    const type = c.u32()
    metadata.set(key, key === 'tokenizer.ggml.tokens' && type === ARRAY ? c.tokens(vocabulary) : c.value(type, key))
  }
  const architecture = metadata.get('general.architecture')
  if (typeof architecture !== 'string') throw invalid(c.path, 'it has no general.architecture')
  const alignment = metadata.get('general.alignment') ?? 32
  if (typeof alignment !== 'number' || alignment === 0 || (alignment & (alignment - 1)) !== 0)
    throw invalid(c.path, `general.alignment is ${String(alignment)}, not a power of two`)
  let extent = 0
  // llama.cpp lays the tensors out one after the other, each padded to the alignment, and refuses any other layout;
  // so does this, as far as it knows the types' sizes (a type newer than the table ends the check of the layout).
  let expected: number | undefined = 0
  const offsets: number[] = []
  for (let i = 0; i < tensorCount; i++) {
    const name = c.string(MAX_KEPT_STRING, 'a tensor name')
    const dims = c.u32()
    if (dims === 0 || dims > MAX_DIMS) throw invalid(c.path, `tensor ${name} has ${dims} dimensions`)
    const shape: number[] = []
    for (let d = 0; d < dims; d++) shape.push(c.u64('a tensor dimension'))
    if (shape.includes(0)) throw invalid(c.path, `tensor ${name} has a dimension of 0`)
    const values = shape.reduce((a, b) => a * b, 1)
    const type = c.u32()
    const offset = c.u64('a tensor offset')
    if (type > MAX_GGML_TYPE) throw invalid(c.path, `tensor ${name} has an unknown type ${type}`)
    if (offset % alignment !== 0) throw invalid(c.path, `tensor ${name}'s data is not aligned to ${alignment} bytes`)
    if (expected !== undefined && offset !== expected) throw invalid(c.path, `tensor ${name}'s data is at ${offset}, expected ${expected}`)
    const block = GGML_TYPES[type]
    if (block && shape[0]! % block[1] !== 0) throw invalid(c.path, `tensor ${name}'s rows are not whole blocks of its type`)
    const bytes = block ? (values / block[1]) * block[0] : 0
    if (!Number.isSafeInteger(values) || !Number.isSafeInteger(offset + bytes)) throw invalid(c.path, `tensor ${name} is impossibly large`)
    extent = Math.max(extent, offset + bytes)
    offsets.push(offset)
    expected = block && expected !== undefined ? Math.ceil((offset + bytes) / alignment) * alignment : undefined
  }
  const dataOffset = Math.ceil(c.pos / alignment) * alignment
  // llama.cpp maps the file and asserts (aborting the process) that every tensor's data is 32-byte aligned in it.
  if (offsets.some((o) => (dataOffset + o) % LLAMA_ALIGNMENT !== 0))
    throw invalid(c.path, `its tensors' data is not ${LLAMA_ALIGNMENT}-byte aligned in the file (general.alignment ${alignment})`)
  // A file without tensor data (a vocabulary-only GGUF) ends with its header, unpadded.
  const dataEnd = extent === 0 ? c.pos : dataOffset + extent
  if (dataEnd > c.size) throw truncated(c.path, c.size, dataEnd, 'its tensors')
  return { version, architecture, metadata, tensorCount, vocabulary, dataOffset, dataEnd, fileSize: c.size }
}

/** A bounded, buffered reader over the file: every read is checked against the file's size first. */
class Cursor {
  pos = 0
  private buf = Buffer.alloc(0)
  private bufStart = 0

  constructor(
    private readonly fd: number,
    readonly size: number,
    readonly path: string,
  ) {}

  /** Makes the next `n` bytes readable, or throws: the file ends before them. */
  private need(n: number, what: string): void {
    if (this.pos + n > this.size) throw truncated(this.path, this.size, this.pos + n, what)
    if (this.pos + n > MAX_HEADER_BYTES) throw invalid(this.path, `its header is larger than ${MAX_HEADER_BYTES / 1024 / 1024} MiB`)
    const at = this.pos - this.bufStart
    if (at >= 0 && at + n <= this.buf.length) return
    const length = Math.min(Math.max(n, WINDOW), this.size - this.pos)
    const buf = Buffer.alloc(length)
    let got = 0
    while (got < length) {
      const r = readSync(this.fd, buf, got, length - got, this.pos + got)
      if (r === 0) throw truncated(this.path, this.pos + got, this.pos + n, what)
      got += r
    }
    this.buf = buf
    this.bufStart = this.pos
  }

  private at(n: number, what: string): number {
    this.need(n, what)
    const at = this.pos - this.bufStart
    this.pos += n
    return at
  }

  // `this.at` may replace `this.buf`: it is called before the buffer is read.
  u32(what = 'the header'): number {
    const at = this.at(4, what)
    return this.buf.readUInt32LE(at)
  }

  u64(what: string): number {
    const at = this.at(8, what)
    const v = this.buf.readBigUInt64LE(at)
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid(this.path, `${what} is impossibly large (${v})`)
    return Number(v)
  }

  /** A count whose items each take at least one byte: more than the bytes left means a damaged file. */
  count(what: string, max: number): number {
    const n = this.u64(what)
    if (n > max) throw invalid(this.path, `its ${what} is ${n}, more than any model has`)
    if (n > this.size - this.pos) throw truncated(this.path, this.size, this.pos + n, `its ${what} (${n})`)
    return n
  }

  /** A string: kept when at most `keep` bytes, else skipped (and '' returned). */
  string(keep: number, what: string): string {
    const n = this.u64(what)
    if (n > this.size - this.pos) throw truncated(this.path, this.size, this.pos + n, what)
    if (n > keep) {
      this.skip(n, what)
      return ''
    }
    const at = this.at(n, what)
    return this.buf.toString('utf8', at, at + n)
  }

  skip(n: number, what: string): void {
    if (this.pos + n > this.size) throw truncated(this.path, this.size, this.pos + n, what)
    this.pos += n
  }

  /** The vocabulary: its length, and (read token by token) a token written twice and how many byte tokens it has. */
  tokens(vocabulary: GgufHeader['vocabulary']): { arrayLength: number } {
    const what = 'metadata tokenizer.ggml.tokens'
    const itemType = this.u32(what)
    if (itemType !== STRING) throw invalid(this.path, `${what} is not an array of strings`)
    const n = this.u64(what)
    if (n * 8 > this.size - this.pos) throw truncated(this.path, this.size, this.pos + n * 8, what)
    const seen = new Set<string>()
    for (let i = 0; i < n; i++) {
      const token = this.string(MAX_KEPT_STRING, what)
      if (seen.has(token) && token !== '') vocabulary.duplicate ??= token
      seen.add(token)
      if (/^<0x[0-9A-F]{2}>$/.test(token)) vocabulary.byteTokens++
    }
    return { arrayLength: n }
  }

  value(type: number, key: string): string | number | boolean | bigint | { arrayLength: number } {
    const what = `metadata ${key}`
    if (type === STRING) return this.string(MAX_KEPT_STRING, what)
    if (type === ARRAY) {
      const itemType = this.u32(what)
      const n = this.u64(what)
      const itemBytes = SCALAR_BYTES[itemType]
      if (itemBytes !== undefined) {
        if (n * itemBytes > this.size - this.pos) throw truncated(this.path, this.size, this.pos + n * itemBytes, what)
        this.skip(n * itemBytes, what)
      } else if (itemType === STRING) {
        if (n * 8 > this.size - this.pos) throw truncated(this.path, this.size, this.pos + n * 8, what)
        for (let i = 0; i < n; i++) this.string(0, what)
      } else throw invalid(this.path, `${what} is an array of type ${itemType}`)
      return { arrayLength: n }
    }
    const bytes = SCALAR_BYTES[type]
    if (bytes === undefined) throw invalid(this.path, `${what} has an unknown value type ${type}`)
    const at = this.at(bytes, what)
    const b = this.buf
    switch (type) {
      case 0:
        return b.readUInt8(at)
      case 1:
        return b.readInt8(at)
      case 2:
        return b.readUInt16LE(at)
      case 3:
        return b.readInt16LE(at)
      case 4:
        return b.readUInt32LE(at)
      case 5:
        return b.readInt32LE(at)
      case 6:
        return b.readFloatLE(at)
      case 7:
        return b.readUInt8(at) !== 0
      case 10:
        return safe(b.readBigUInt64LE(at))
      case 11:
        return safe(b.readBigInt64LE(at))
      default:
        return b.readDoubleLE(at)
    }
  }
}

function safe(v: bigint): number | bigint {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v
}

function notGguf(path: string, size: number): TeaError {
  return new TeaError(
    'GGUF_NOT_GGUF',
    `${path} is not a GGUF model file (it does not start with "GGUF"${size < 4 ? `; it is ${size} bytes` : ''})`,
    {
      details: { path },
      hint: "give the path of a .gguf file (llama.cpp's format); a model in another format (safetensors, PyTorch) must be converted to GGUF first",
    },
  )
}

function truncated(path: string, size: number, needed: number, what: string): TeaError {
  return new TeaError('GGUF_TRUNCATED', `the GGUF model ${path} is cut short: it is ${size} bytes; ${needed} are needed for ${what}`, {
    details: { path, size, needed },
    hint: 'the copy did not finish: copy the model file again and compare its size (or sha256) with the original',
  })
}

function invalid(path: string, why: string): TeaError {
  return new TeaError('GGUF_INVALID', `the GGUF model ${path} is damaged: ${why}`, {
    details: { path },
    hint: 'copy the model file again, or get the model again from where it came from',
  })
}
