/**
 * What tea checks of a GGUF model before llama.cpp loads it, and what `tea doctor` reports: the file exists and is
 * a whole GGUF (header.ts), its architecture is one this llama.cpp runs, and the memory it needs fits in what the
 * board (or the service's cgroup) has free. The estimate is rough on purpose: the weights (memory-mapped, but read
 * whole while generating), the KV cache for the context, and a fixed allowance for llama.cpp's compute buffers.
 */

import { readFileSync } from 'node:fs'
import { freemem } from 'node:os'
import { TeaError } from '../../core/errors.ts'
import { SUPPORTED_ARCHITECTURES } from './architectures.ts'
import { readGgufHeader, type GgufHeader } from './header.ts'

export interface GgufModelInfo {
  path: string
  header: GgufHeader
  /** The context the model was trained with (`<arch>.context_length`), when the file says. */
  trainContext: number | undefined
}

/** Compute buffers, the logits, the addon itself: what llama.cpp takes beyond weights and KV cache. */
const OVERHEAD_BYTES = 64 * 1024 * 1024
const MIB = 1024 * 1024

/** Reads and checks the file: missing, not GGUF, cut short, damaged, or an architecture llama.cpp lacks, each coded. */
export function inspectGguf(path: string): GgufModelInfo {
  const header = readGgufHeader(path)
  if (!SUPPORTED_ARCHITECTURES.has(header.architecture))
    throw new TeaError(
      'GGUF_UNSUPPORTED_ARCH',
      `the GGUF model ${path} is of architecture '${header.architecture.slice(0, 64)}', which the llama.cpp in this tea does not run`,
      {
        details: { path, architecture: header.architecture.slice(0, 64) },
        hint: 'use a model of an architecture llama.cpp runs (llama, qwen2, qwen3, gemma3, phi3, …); a newer tea may run this one',
      },
    )
  checkShape(path, header)
  const context = metaNumber(header, `${header.architecture}.context_length`)
  return { path, header, trainContext: context !== undefined && context > 0 ? context : undefined }
}

/**
 * Dense transformer architectures, whose layers all have attention heads and a feed-forward: a 0 among those
 * sizes makes llama.cpp abort the process (a division by zero, an assertion) instead of refusing the file. Other
 * architectures (recurrent, hybrid, mixture-of-experts) may write 0 or per-layer lists there, and are left to
 * llama.cpp.
 */
const DENSE = new Set([
  'llama',
  'qwen2',
  'qwen3',
  'gemma',
  'gemma2',
  'gemma3',
  'phi2',
  'phi3',
  'starcoder2',
  'gpt2',
  'stablelm',
  'olmo',
  'olmo2',
  'granite',
  'smollm3',
  'internlm2',
  'command-r',
  'mistral3',
  'baichuan',
  'falcon',
  'bloom',
  'mpt',
  'gptneox',
  'exaone',
])

/**
 * The architectures whose every converted file writes its feed-forward size and head count (llama.cpp's converter
 * always has): one without them is damaged. Older architectures' files from older converters may lack them.
 */
const ALWAYS_SIZED = new Set(['llama', 'qwen2', 'qwen3', 'gemma', 'gemma2', 'gemma3', 'phi3', 'mistral3', 'granite', 'smollm3'])

/** Sizes no model has, which llama.cpp would not survive: GGUF_INVALID before it sees them. */
function checkShape(path: string, h: GgufHeader): void {
  const arch = h.architecture
  const damaged = (why: string): TeaError =>
    new TeaError('GGUF_INVALID', `the GGUF model ${path} is damaged: ${why}`, {
      details: { path },
      hint: 'copy the model file again, or get the model again from where it came from',
    })
  // llama.cpp asserts (aborting the process) that no token is written twice, and a sentencepiece vocabulary
  // ('llama') needs every byte token to spell what it has no token for; every real vocabulary has both.
  if (h.vocabulary.duplicate !== undefined)
    throw damaged(`its vocabulary holds the token ${JSON.stringify(h.vocabulary.duplicate.slice(0, 40))} twice`)
  if (h.metadata.get('tokenizer.ggml.model') === 'llama' && h.metadata.has('tokenizer.ggml.tokens') && h.vocabulary.byteTokens !== 256)
    throw damaged(`its sentencepiece vocabulary has ${h.vocabulary.byteTokens} of the 256 byte tokens`)
  const sizes = DENSE.has(arch)
    ? ['block_count', 'embedding_length', 'feed_forward_length', 'attention.head_count', 'attention.head_count_kv']
    : ['block_count', 'embedding_length']
  for (const key of sizes) {
    const v = metaNumber(h, `${arch}.${key}`)
    // A dense model always says its feed-forward size and heads; llama.cpp takes a missing one as 0, and aborts.
    if (v === undefined && ALWAYS_SIZED.has(arch) && (key === 'feed_forward_length' || key === 'attention.head_count'))
      throw damaged(`it lacks ${arch}.${key}`)
    if (v !== undefined && (v < 1 || !Number.isInteger(v)))
      throw new TeaError('GGUF_INVALID', `the GGUF model ${path} is damaged: its ${arch}.${key} is ${v}`, {
        details: { path, key: `${arch}.${key}`, value: v },
        hint: 'copy the model file again, or get the model again from where it came from',
      })
  }
  const heads = metaNumber(h, `${arch}.attention.head_count`)
  const kvHeads = metaNumber(h, `${arch}.attention.head_count_kv`)
  if (DENSE.has(arch) && heads !== undefined && kvHeads !== undefined && heads % kvHeads !== 0)
    throw new TeaError(
      'GGUF_INVALID',
      `the GGUF model ${path} is damaged: ${heads} attention heads do not share ${kvHeads} key-value heads`,
      {
        details: { path },
        hint: 'copy the model file again, or get the model again from where it came from',
      },
    )
}

/** Bytes the model needs in memory with a context of `contextSize` tokens for each of `sequences` calls at once. */
export function memoryNeeded(info: GgufModelInfo, contextSize: number, sequences = 1): number {
  const h = info.header
  const arch = h.architecture
  const layers = metaNumber(h, `${arch}.block_count`) ?? 0
  const embedding = metaNumber(h, `${arch}.embedding_length`) ?? 0
  const heads = metaNumber(h, `${arch}.attention.head_count`) ?? 0
  const kvHeads = metaNumber(h, `${arch}.attention.head_count_kv`) ?? heads
  const keyLength = metaNumber(h, `${arch}.attention.key_length`) ?? (heads > 0 ? embedding / heads : 0)
  const valueLength = metaNumber(h, `${arch}.attention.value_length`) ?? keyLength
  // K and V, f16 (2 bytes), for every layer and every token of every sequence's context.
  const kvCache = layers * contextSize * sequences * kvHeads * (keyLength + valueLength) * 2
  return h.dataEnd - h.dataOffset + kvCache + OVERHEAD_BYTES
}

/**
 * The memory a new allocation can have without swapping: MemAvailable, and under a cgroup limit (a systemd unit's
 * MemoryMax, a container) what is left below the limit, whichever is less.
 */
export function freeMemory(): number {
  let free = freemem()
  try {
    const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))
    if (m) free = Number(m[1]) * 1024
  } catch {}
  const room = cgroupRoom()
  return room === undefined ? free : Math.min(free, room)
}

/** Throws GGUF_TOO_LARGE when `needed` bytes are more than `free`. */
export function checkMemory(info: GgufModelInfo, needed: number, free = freeMemory()): void {
  if (needed <= free) return
  throw new TeaError(
    'GGUF_TOO_LARGE',
    `the GGUF model ${info.path} needs ~${mib(needed)} MiB of memory (weights and context), and ${mib(free)} MiB are free`,
    {
      details: { path: info.path, needed_mib: mib(needed), free_mib: mib(free) },
      hint: "use a smaller model or a smaller quantisation (a 0.5-1.5 B model at Q4 on a 2-4 GB board), lower settings.llm.n_ctx, stop what else uses the memory, or raise the service's MemoryMax",
    },
  )
}

export function mib(bytes: number): number {
  return Math.ceil(bytes / MIB)
}

/** A metadata value that is a number (GGUF stores these as uint32 mostly, sometimes as other integer types). */
export function metaNumber(h: GgufHeader, key: string): number | undefined {
  const v = h.metadata.get(key)
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}

/** Room left under this process's cgroup v2 memory limit, or undefined when there is none. */
function cgroupRoom(): number | undefined {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'))
    if (!line) return undefined
    const dir = `/sys/fs/cgroup${line.slice(3).trim()}`.replace(/\/$/, '')
    const max = readFileSync(`${dir}/memory.max`, 'utf8').trim()
    if (max === 'max') return undefined
    const current = Number(readFileSync(`${dir}/memory.current`, 'utf8').trim())
    const limit = Number(max)
    return Number.isFinite(limit) && Number.isFinite(current) ? Math.max(0, limit - current) : undefined
  } catch {
    return undefined
  }
}
