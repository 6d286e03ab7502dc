/**
 * The defaults a GGUF model runs with when the agent does not say.
 *
 * Threads: llama.cpp's own default (every core) was 20 times slower on a 2-core machine busy with other work
 * (50 tokens in 11.5 s against 0.54 s with one thread: threads wait on each other at every layer, and one that
 * is descheduled stalls them all). One fewer than the cores, at least 1 and at most 4, leaves a core to the rest
 * of the board (tea itself, the agent's code) and stops where more threads stop paying on a board's memory bandwidth;
 * bench/gguf.bench.ts measures it.
 *
 * Context: 2048 tokens (TEA's default n_ctx, and Ollama's for years), never more than the model was trained for.
 */

import { availableParallelism } from 'node:os'
import type { GgufModelInfo } from './model-file.ts'

export const DEFAULT_CONTEXT = 2048

export function threadsFor(threads: number | undefined): number {
  if (threads !== undefined && Number.isInteger(threads) && threads >= 1) return threads
  return Math.min(4, Math.max(1, availableParallelism() - 1))
}

export function contextSizeFor(info: GgufModelInfo, contextSize: number | undefined): number {
  if (contextSize !== undefined && Number.isInteger(contextSize) && contextSize >= 16) return contextSize
  return Math.min(DEFAULT_CONTEXT, info.trainContext ?? DEFAULT_CONTEXT)
}
