/**
 * The llama.cpp addon (node-llama-cpp's `Llama`), loaded once per process when a GGUF model is first used, and only
 * then: nothing here runs at start-up. Only prebuilt binaries are used (`build: 'never'`, CPU only): nothing is
 * compiled or downloaded at run time. From source they come from the `@node-llama-cpp/linux-<arch>` package in
 * node_modules; in a single executable the build replaces that package with the copy the executable carries
 * (written once into the cache dir: src/sea/llama-addon.ts, scripts/build/plugins.mjs). llama.cpp's own log lines
 * go to stderr at warn and above, prefixed `llama.cpp:`.
 */
import type { Llama, LlamaLogLevel } from 'node-llama-cpp'
import { TeaError, errorMessage, isTeaError } from '../../core/errors.ts'

let loading: Promise<Llama> | undefined

/** The process's one `Llama`; the first call loads the addon, later calls share it (a failed load is retried). */
export function loadLlama(): Promise<Llama> {
  loading ??= load().catch((e: unknown) => {
    loading = undefined
    throw e
  })
  return loading
}

const QUIET: ReadonlySet<string> = new Set(['disabled', 'fatal', 'error', 'warn'])

async function load(): Promise<Llama> {
  const { getLlama } = await import('node-llama-cpp')
  try {
    return await getLlama({
      build: 'never',
      gpu: false,
      usePrebuiltBinaries: true,
      skipDownload: true,
      progressLogs: false,
      logLevel: 'warn' as LlamaLogLevel,
      logger: (level, message) => {
        if (QUIET.has(level) && message.trim() !== '') process.stderr.write(`llama.cpp: ${message.trimEnd()}\n`)
      },
    })
  } catch (e) {
    if (isTeaError(e)) throw e
    if (/failed to map segment/i.test(errorMessage(e)))
      throw new TeaError('CACHE_DIR_UNUSABLE', `cannot load llama.cpp's native addon: ${errorMessage(e)}`, {
        cause: e,
        hint: 'the cache directory is on a filesystem mounted noexec: set TEA_CACHE_DIR to a writable directory that allows exec',
      })
    throw new TeaError('NATIVE_LOAD_FAILED', `cannot load llama.cpp's native addon: ${errorMessage(e)}`, {
      cause: e,
      hint: `GGUF models need the @node-llama-cpp/${process.platform}-${process.arch === 'arm' ? 'armv7l' : process.arch} prebuilt package (run \`npm install\`), or a tea executable built with the llama feature`,
    })
  }
}
