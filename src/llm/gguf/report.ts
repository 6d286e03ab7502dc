/**
 * What `tea doctor` says of one GGUF model (src/cli/doctor/gguf.ts): the file exists and is a whole GGUF, its
 * architecture is one this llama.cpp runs, and the memory it needs with its context and slots fits in what is
 * free. From the header alone (model-file.ts): llama.cpp is not loaded. Doctor reaches it through the llama
 * feature's entry (src/llama/index.ts), so a build without llama.cpp carries none of this.
 */

import { errorMessage, isTeaError } from '../../core/errors.ts'
import { contextSizeFor } from './defaults.ts'
import { freeMemory, inspectGguf, memoryNeeded, mib } from './model-file.ts'

export interface GgufReport {
  ok: boolean
  detail: string
  fix?: string
}

export function ggufReport(path: string, contextSize: number | undefined, slots: number, free = freeMemory()): GgufReport {
  try {
    const info = inspectGguf(path)
    const context = contextSizeFor(info, contextSize)
    const needed = memoryNeeded(info, context, slots)
    const detail = `${path} (${info.header.architecture}, ${mib(info.header.fileSize)} MiB file) needs ~${mib(needed)} MiB with a ${context}-token context, ${mib(free)} MiB free`
    if (needed <= free) return { ok: true, detail }
    return {
      ok: false,
      detail,
      fix: "use a smaller model or quantisation (0.5-1.5 B at Q4 on a 2-4 GB board), lower settings.llm.n_ctx, stop other programs, or raise the service's MemoryMax",
    }
  } catch (e) {
    return {
      ok: false,
      detail: isTeaError(e) ? `${e.code}: ${errorMessage(e)}` : String(e),
      ...(isTeaError(e) && e.hint ? { fix: e.hint } : {}),
    }
  }
}
