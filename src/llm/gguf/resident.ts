/**
 * The GGUF models in memory, one per file for the whole process: every run, `tea serve`'s and `tea worker`'s
 * included, shares the one loaded (memory-mapped) model and its contexts. A model is loaded at its first call,
 * checked first (model-file.ts: the file, its architecture, the memory it needs); a chat context is made per
 * context size and thread count, with one sequence per slot (settings.llm.scheduler.slots), and an embedding
 * context the same way. When no call holds a model, it is unloaded after its `keep_alive` (default 5 minutes; a
 * negative value keeps it for good, 0 unloads it at once) by an unref'd timer, which never keeps the process alive.
 * Loading a model unloads idle others beyond `maxLoaded` (default 1: a board holds one model).
 */

import type { Llama, LlamaContext, LlamaContextSequence, LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp'
import { TeaError, errorMessage, isTeaError } from '../../core/errors.ts'
import { keepAliveMs } from '../keep-alive.ts'
import type { GgufOptions } from '../types.ts'
import { loadLlama } from './addon.ts'
import { checkMemory, inspectGguf, memoryNeeded, type GgufModelInfo } from './model-file.ts'
import { contextSizeFor, threadsFor } from './defaults.ts'

const DEFAULT_KEEP_ALIVE_MS = 5 * 60_000

interface ChatSlots {
  context: LlamaContext
  free: LlamaContextSequence[]
  waiting: Array<(s: LlamaContextSequence) => void>
}

interface Resident {
  path: string
  info: GgufModelInfo
  model: LlamaModel
  chats: Map<string, Promise<ChatSlots>>
  embedders: Map<string, Promise<LlamaEmbeddingContext>>
  busy: number
  keepAliveMs: number
  timer?: NodeJS.Timeout
  unloading?: Promise<void>
}

/** One chat call's hold on a model: its sequence, given back with `release`. */
export interface ChatLease {
  llama: Llama
  model: LlamaModel
  info: GgufModelInfo
  sequence: LlamaContextSequence
  contextSize: number
  release(keepAlive: string | number | undefined): void
}

export interface EmbedLease {
  model: LlamaModel
  context: LlamaEmbeddingContext
  contextSize: number
  release(keepAlive: string | number | undefined): void
}

const residents = new Map<string, Promise<Resident>>()
/** The models loaded and not being unloaded, in the order they were loaded. */
const ready = new Map<string, Resident>()

/** A sequence of `path`'s chat context, loading the model and making the context first when needed. */
export async function leaseChat(path: string, options: GgufOptions, signal?: AbortSignal): Promise<ChatLease> {
  const r = await hold(path, options, signal)
  try {
    const contextSize = contextSizeFor(r.info, options.contextSize)
    const threads = threadsFor(options.threads)
    const key = `${contextSize}/${threads}/${options.slots}`
    let slots = r.chats.get(key)
    if (!slots) {
      slots = makeChat(r, contextSize, threads, options.slots)
      r.chats.set(key, slots)
      slots.catch(() => r.chats.delete(key))
    }
    const s = await slots
    const llama = await loadLlama()
    const sequence = s.free.pop() ?? (await nextFree(s, signal))
    let released = false
    return {
      llama,
      model: r.model,
      info: r.info,
      sequence,
      contextSize,
      release(keepAlive) {
        if (released) return
        released = true
        const next = s.waiting.shift()
        if (next) next(sequence)
        else s.free.push(sequence)
        letGo(r, keepAlive)
      },
    }
  } catch (e) {
    letGo(r, undefined)
    throw e
  }
}

/** `path`'s embedding context (the model loaded first when needed). */
export async function leaseEmbedding(path: string, options: GgufOptions, signal?: AbortSignal): Promise<EmbedLease> {
  const r = await hold(path, options, signal)
  try {
    const contextSize = contextSizeFor(r.info, options.contextSize)
    const threads = threadsFor(options.threads)
    const key = `${contextSize}/${threads}`
    let context = r.embedders.get(key)
    if (!context) {
      context = r.model.createEmbeddingContext({ contextSize, threads }).catch((e: unknown) => {
        r.embedders.delete(key)
        throw loadFailed(path, e)
      })
      r.embedders.set(key, context)
    }
    return { model: r.model, context: await context, contextSize, release: (keepAlive) => letGo(r, keepAlive) }
  } catch (e) {
    letGo(r, undefined)
    throw e
  }
}

/** The paths of the GGUF models loaded now. */
export function loadedGgufModels(): string[] {
  return [...residents.keys()]
}

/** Unloads every model no call holds (tests; a process about to end need not). */
export async function unloadIdleGgufModels(): Promise<void> {
  await Promise.all(
    [...residents.values()].map(async (p) => {
      const r = await p.catch(() => undefined)
      if (r && r.busy === 0) await unload(r)
    }),
  )
}

// --- internal ---

async function hold(path: string, options: GgufOptions, signal?: AbortSignal): Promise<Resident> {
  let pending = residents.get(path)
  if (pending) {
    const r = await pending
    if (!r.unloading) {
      claim(r)
      return r
    }
    await r.unloading
    return hold(path, options, signal)
  }
  // Set before anything is awaited: a second call for the same file meanwhile waits for this load.
  pending = makeRoom(path, options.maxLoaded - 1).then(() => load(path, options, signal))
  residents.set(path, pending)
  pending.catch(() => residents.delete(path))
  const r = await pending
  claim(r)
  return r
}

function claim(r: Resident): void {
  r.busy++
  if (r.timer) clearTimeout(r.timer)
  r.timer = undefined
}

async function load(path: string, options: GgufOptions, signal?: AbortSignal): Promise<Resident> {
  // Checked before llama.cpp sees the file: a damaged file may abort llama.cpp, and so the process.
  const info = inspectGguf(path)
  checkMemory(info, memoryNeeded(info, contextSizeFor(info, options.contextSize), options.slots))
  const llama = await loadLlama()
  let model: LlamaModel
  try {
    model = await llama.loadModel({ modelPath: path, gpuLayers: 0, ...(signal && { loadSignal: signal }) })
  } catch (e) {
    throw loadFailed(path, e)
  }
  const r: Resident = { path, info, model, chats: new Map(), embedders: new Map(), busy: 0, keepAliveMs: DEFAULT_KEEP_ALIVE_MS }
  ready.set(path, r)
  return r
}

async function makeChat(r: Resident, contextSize: number, threads: number, slots: number): Promise<ChatSlots> {
  let context: LlamaContext
  try {
    context = await r.model.createContext({ contextSize, sequences: slots, threads, failedCreationRemedy: false })
  } catch (e) {
    throw loadFailed(r.path, e)
  }
  const free: LlamaContextSequence[] = []
  for (let i = 0; i < slots; i++) free.push(context.getSequence())
  return { context, free: free.reverse(), waiting: [] }
}

/**
 * Waits for a sequence another call gives back. The call scheduler lets no more calls through than there are
 * sequences, so this waits only when the agent switched the scheduler off; a call that is cancelled meanwhile
 * stops waiting.
 */
function nextFree(s: ChatSlots, signal: AbortSignal | undefined): Promise<LlamaContextSequence> {
  return new Promise((resolve, reject) => {
    const take = (sequence: LlamaContextSequence): void => {
      signal?.removeEventListener('abort', onAbort)
      resolve(sequence)
    }
    const onAbort = (): void => {
      s.waiting.splice(s.waiting.indexOf(take), 1)
      reject(signal?.reason)
    }
    if (signal?.aborted) return reject(signal.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    s.waiting.push(take)
  })
}

/** A call let go of the model: once none holds it, it stays for its keep_alive, then is unloaded. */
function letGo(r: Resident, keepAlive: string | number | undefined): void {
  r.busy--
  if (keepAlive !== undefined) r.keepAliveMs = keepAliveMs(keepAlive) ?? r.keepAliveMs
  if (r.busy > 0) return
  if (r.keepAliveMs < 0) return
  if (r.keepAliveMs === 0) {
    void unload(r)
    return
  }
  r.timer = setTimeout(() => void unload(r), r.keepAliveMs)
  r.timer.unref()
}

async function unload(r: Resident): Promise<void> {
  if (r.unloading) return r.unloading
  if (r.timer) clearTimeout(r.timer)
  r.unloading = (async () => {
    residents.delete(r.path)
    ready.delete(r.path)
    for (const c of r.chats.values()) await c.then((s) => s.context.dispose()).catch(() => {})
    for (const c of r.embedders.values()) await c.then((e) => e.dispose()).catch(() => {})
    await r.model.dispose().catch(() => {})
  })()
  return r.unloading
}

/**
 * Unloads idle models other than `path`, least recently loaded first, until at most `keep` others remain. Only
 * models already loaded count: waiting for one still loading could wait for this very load.
 */
async function makeRoom(path: string, keep: number): Promise<void> {
  for (const r of [...ready.values()]) {
    if ([...ready.keys()].filter((p) => p !== path).length <= Math.max(0, keep)) return
    if (r.path !== path && r.busy === 0) await unload(r)
  }
}

function loadFailed(path: string, e: unknown): TeaError {
  if (isTeaError(e)) return e
  const name = (e as { name?: unknown })?.name
  if (name === 'InsufficientMemoryError')
    return new TeaError('GGUF_TOO_LARGE', `llama.cpp has not enough memory for the GGUF model ${path}: ${errorMessage(e)}`, {
      cause: e,
      details: { path },
      hint: 'use a smaller model or quantisation, or lower settings.llm.n_ctx or scheduler.slots',
    })
  return new TeaError('GGUF_INVALID', `llama.cpp cannot load the GGUF model ${path}: ${errorMessage(e)}`, {
    cause: e,
    details: { path },
    hint: 'the file may be damaged or made for a newer llama.cpp: copy it again, or try another build of the model',
  })
}
