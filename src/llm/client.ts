/**
 * The `LlmClient` every action uses: resolves the model string to a provider, merges `settings.llm` defaults
 * under per-call values, bounds each attempt with a timeout and each reply with `max_reply_bytes`, retries
 * transient failures with backoff (but not once a streamed token has been passed on), parses structured output,
 * and records or replays cassettes. Providers make exactly one attempt each. Each attempt to a local model server
 * waits its turn in the call scheduler (call-scheduler.ts), and its timeout starts when it is sent.
 */

import { TeaError, isTeaError } from '../core/errors.ts'
import { cancelled, isControlSignal } from '../core/signals.ts'
import { sleep } from '../core/util.ts'
import { resolveOllamaUrl, resolveOpenAiUrl } from './base-url.ts'
import { sharedCallScheduler } from './call-scheduler.ts'
import type { CallScheduler, ServerLimits } from './call-scheduler.ts'
import { keepAliveMs } from './keep-alive.ts'
import { createGgufProvider } from './gguf/provider.ts'
import { ggufPath } from './gguf/path.ts'
import { formatModelSpec, resolveModel } from './model-spec.ts'
import type { ModelSpec, ProviderName } from './model-spec.ts'
import { createOllamaProvider } from './ollama-provider.ts'
import { loadedModels, setKeepAlive } from './ollama-server.ts'
import { createOpenAiProvider } from './openai-provider.ts'
import { createCassetteWriter, recordingProvider } from './recording-provider.ts'
import { createReplayProvider } from './replay-provider.ts'
import { createShellProvider } from './shell-provider.ts'
import { isTransient, mayRetry, retryDelay } from './retry-policy.ts'
import { DEFAULT_MAX_REPLY_BYTES, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, mergeLlmSettings } from './settings.ts'
import { parseStructured } from './structured.ts'
import type {
  EmbedRequest,
  EmbedResult,
  GgufOptions,
  LlmClient,
  LlmProvider,
  LlmRequest,
  LlmResult,
  LlmSettings,
  ProviderReply,
  SchedulerSettings,
} from './types.ts'

export interface LlmClientOptions {
  env: NodeJS.ProcessEnv
  /** `settings.llm` of the agent. */
  defaults?: LlmSettings
  /** Cassette path to write every exchange to (`--record`). */
  record?: string
  /** Cassette path to answer every call from, without network (`--replay`). */
  replay?: string
  /** Base of the exponential backoff between retries, in ms (default 500). */
  backoffBaseMs?: number
  /** Where calls queue for their server (default: the one the whole process shares). */
  scheduler?: CallScheduler
}

/**
 * While a run goes on, a model it uses stays loaded at least this long after each call, whatever shorter
 * keep_alive the agent gives: the agent's own value is applied when the run is over (client.close).
 */
const RUN_KEEP_ALIVE = '5m'

const RUN_KEEP_ALIVE_MS = 5 * 60_000
/** How long a call may be passed over for calls to the loaded model, unless settings.llm.scheduler.max_wait says. */
const DEFAULT_MAX_WAIT_S = 30
/** How long a model that just answered is kept from eviction, unless settings.llm.scheduler.hold says. */
const DEFAULT_HOLD_S = 0.1

export function createLlmClient(options: LlmClientOptions): LlmClient {
  if (options.record && options.replay) {
    throw new TeaError('USAGE', '--record and --replay cannot be used together: a run either records a cassette or replays one')
  }
  const replay = options.replay ? createReplayProvider(options.replay) : undefined
  const writer = options.record ? createCassetteWriter(options.record) : undefined
  const providers = new Map<ProviderName, LlmProvider>()
  const backoffBaseMs = options.backoffBaseMs ?? 500
  const scheduler = options.scheduler ?? sharedCallScheduler
  /** Models whose shorter keep_alive the run held back, applied at close: `server model` → what the agent said. */
  const held = new Map<string, { server: string; model: string; keepAlive: string | number }>()

  function queueOf(spec: ModelSpec, settings: LlmSettings): { server: string; limits: ServerLimits } | undefined {
    if (replay) return undefined
    return serverQueue(spec, settings, options.defaults?.scheduler, options.env)
  }

  function providerFor(spec: ModelSpec): LlmProvider {
    if (replay) return replay
    if (spec.provider === 'replay') {
      throw new TeaError('LLM_BAD_MODEL', `model ${formatModelSpec(spec)} answers from a cassette, and no cassette was given`, {
        hint: 'run with --replay CASSETTE, or use ollama:<name> / openai:<name>',
      })
    }
    let provider = providers.get(spec.provider)
    if (!provider) {
      provider =
        spec.provider === 'ollama'
          ? createOllamaProvider(options.env)
          : spec.provider === 'shell'
            ? createShellProvider(options.defaults?.shell_providers, options.env, {
                skipPermissions: options.defaults?.shell_skip_permissions === true,
              })
            : spec.provider === 'gguf'
              ? createGgufProvider()
              : createOpenAiProvider(options.env)
      if (writer) provider = recordingProvider(provider, writer)
      providers.set(spec.provider, provider)
    }
    return provider
  }

  return {
    async call(request: LlmRequest): Promise<LlmResult> {
      const settings = mergeLlmSettings(options.defaults, request)
      if ((settings.model === undefined || settings.model === '') && settings.provider !== 'shell' && !isLocal(settings)) {
        throw new TeaError('LLM_BAD_MODEL', 'no model given for this LLM call', {
          hint: 'set settings.llm.model in the agent (e.g. "ollama:qwen2.5:1.5b" or "gguf:model.gguf") or with.model on the node, or pass --model',
        })
      }
      const spec = modelOf(settings, options.env)
      const provider = providerFor(spec)
      const timeoutS = checkNumber('timeout', settings.timeout ?? DEFAULT_TIMEOUT_S, (n) => n > 0, 'a positive number of seconds')
      const retries = checkNumber(
        'max_retries',
        settings.max_retries ?? DEFAULT_MAX_RETRIES,
        (n) => Number.isInteger(n) && n >= 0,
        'a whole number ≥ 0',
      )
      // A command-line model is a whole program: a coding CLI may have run tools and changed files before its time
      // ran out, and a local model that timed out once times out again. Another launch is not a retry of a request,
      // so shell calls are never retried (docs/llm.md); on_error: {mode: retry} on the node asks for it explicitly.
      // A GGUF model runs in this process: nothing transient stands between tea and it, and a call that timed out
      // once would time out again.
      const maxRetries = spec.provider === 'shell' || spec.provider === 'gguf' ? 0 : retries
      const maxReplyBytes = checkNumber(
        'max_reply_bytes',
        settings.max_reply_bytes ?? DEFAULT_MAX_REPLY_BYTES,
        (n) => Number.isInteger(n) && n > 0,
        'a whole number of bytes > 0',
      )
      const queue = queueOf(spec, settings)
      let keepAlive = settings.keep_alive
      if (queue && spec.provider === 'ollama' && keepAlive !== undefined) {
        const ms = keepAliveMs(keepAlive)
        if (ms !== undefined && ms >= 0 && ms < RUN_KEEP_ALIVE_MS) {
          held.set(`${queue.server} ${spec.model}`, { server: queue.server, model: spec.model, keepAlive })
          keepAlive = RUN_KEEP_ALIVE
        }
      }
      if (queue && spec.provider === 'ollama') await scheduler.learn(queue.server, queue.limits, () => loadedModels(queue.server))
      let streamed = 0
      const tools = request.tools?.length ? request.tools : undefined
      // A reply with tool calls is read whole: providers do not stream one.
      const onToken = tools ? undefined : request.onToken
      const providerRequest = {
        model: spec.model,
        messages: request.messages,
        timeoutMs: timeoutS * 1000,
        maxReplyBytes,
        ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
        ...(settings.format === undefined ? {} : { format: settings.format }),
        ...(keepAlive === undefined ? {} : { keep_alive: keepAlive }),
        ...(settings.max_tokens === undefined ? {} : { maxTokens: settings.max_tokens }),
        ...(settings.api_key === undefined ? {} : { apiKey: settings.api_key }),
        ...(settings.stop === undefined ? {} : { stop: settings.stop }),
        ...(settings.options === undefined && settings.seed === undefined
          ? {}
          : { options: settings.seed === undefined ? settings.options : { ...settings.options, seed: settings.seed } }),
        ...(settings.seed === undefined ? {} : { seed: settings.seed }),
        ...(queue && spec.provider === 'gguf' && { gguf: ggufOptions(settings, queue.limits) }),
        ...(settings.base_url === undefined ? {} : { baseUrl: settings.base_url }),
        ...(onToken
          ? {
              onToken: (token: string) => {
                streamed++
                onToken(token)
              },
            }
          : {}),
        ...(request.signal ? { signal: request.signal } : {}),
        ...(tools && { tools }),
      }
      const send = (): Promise<ProviderReply> => provider.chat(providerRequest)
      for (let attempt = 1; ; attempt++) {
        let reply: ProviderReply
        try {
          reply = queue
            ? await scheduler.run({ ...queue, model: spec.model, ...(request.signal && { signal: request.signal }) }, send)
            : await send()
        } catch (e) {
          if (isControlSignal(e)) throw e
          if (request.signal?.aborted) throw cancelled('LLM call cancelled')
          if (attempt > maxRetries || !mayRetry(e, streamed)) {
            // A transient failure that is not retried only because tokens already went out says so.
            const heldBack = attempt <= maxRetries && isTransient(e) ? streamed : 0
            throw withAttempts(e, attempt, heldBack)
          }
          try {
            await sleep(retryDelay(attempt - 1, e, backoffBaseMs), request.signal)
          } catch {
            throw cancelled('LLM call cancelled')
          }
          continue
        }
        return finish(reply, spec, settings, attempt)
      }
    },
    async embed(request: EmbedRequest): Promise<EmbedResult> {
      const settings = mergeLlmSettings(options.defaults, request)
      if ((settings.model === undefined || settings.model === '') && !isLocal(settings)) {
        throw new TeaError('LLM_BAD_MODEL', 'no model given for this embeddings call', {
          hint: 'set with.model on the node (an embeddings model, e.g. ollama:nomic-embed-text) or settings.llm.model',
        })
      }
      const spec = modelOf(settings, options.env)
      const provider = providerFor(spec)
      if (!provider.embed) {
        throw new TeaError(
          'LLM_BAD_MODEL',
          `model ${formatModelSpec(spec)} cannot make embeddings${replay ? ' (a cassette holds chat replies only)' : ''}`,
          {
            hint: 'use an ollama: or openai: embeddings model',
          },
        )
      }
      const timeoutS = checkNumber('timeout', settings.timeout ?? DEFAULT_TIMEOUT_S, (n) => n > 0, 'a positive number of seconds')
      const queue = spec.provider === 'gguf' ? queueOf(spec, settings) : undefined
      const embedOnce = () =>
        provider.embed!({
          model: spec.model,
          input: request.input,
          timeoutMs: timeoutS * 1000,
          ...(settings.base_url === undefined ? {} : { baseUrl: settings.base_url }),
          ...(settings.api_key === undefined ? {} : { apiKey: settings.api_key }),
          ...(request.signal ? { signal: request.signal } : {}),
          ...(queue && { gguf: ggufOptions(settings, queue.limits) }),
        })
      // A GGUF model computes in this process: its embeddings wait their turn like its chat calls.
      const embeddings = queue
        ? await scheduler.run({ ...queue, model: spec.model, ...(request.signal && { signal: request.signal }) }, embedOnce)
        : await embedOnce()
      return { embeddings, model: formatModelSpec(spec) }
    },
    async close(): Promise<void> {
      // Cassette lines are appended synchronously as calls finish; nothing is buffered. What is left is to give the
      // models whose keep_alive the run held back the agent's own value, unless another run is using them.
      const releases = [...held.values()].filter((h) => scheduler.pending(h.server, h.model) === 0)
      held.clear()
      await Promise.all(releases.map((h) => setKeepAlive(h.server, h.model, h.keepAlive)))
    },
  }
}

/**
 * The queue a call waits in: per Ollama server, with its slots (OLLAMA_NUM_PARALLEL, default 1 as Ollama's own) and
 * its resident models (OLLAMA_MAX_LOADED_MODELS, default 1: a board holds one small model), both overridable in
 * settings.llm.scheduler. An OpenAI-compatible server says neither, so its calls are sent at once unless the agent
 * gives slots or max_loaded. `scheduler: false` sends every call at once.
 */
function serverQueue(
  spec: ModelSpec,
  settings: LlmSettings,
  config: boolean | SchedulerSettings | undefined,
  env: NodeJS.ProcessEnv,
): { server: string; limits: ServerLimits } | undefined {
  if (config === false) return undefined
  const c = typeof config === 'object' ? config : {}
  const maxWaitMs = (c.max_wait ?? DEFAULT_MAX_WAIT_S) * 1000
  const holdMs = (c.hold ?? DEFAULT_HOLD_S) * 1000
  if (spec.provider === 'ollama') {
    const slots = c.slots ?? envCount(env, 'OLLAMA_NUM_PARALLEL') ?? 1
    const maxLoaded = c.max_loaded ?? envCount(env, 'OLLAMA_MAX_LOADED_MODELS') ?? 1
    return { server: resolveOllamaUrl(settings.base_url, env), limits: { slots, maxLoaded, maxWaitMs, holdMs } }
  }
  // GGUF models run in this process, which is their one "server": one call at a time and one model in memory unless
  // the agent gives more slots (context sequences) or max_loaded.
  if (spec.provider === 'gguf') return { server: 'gguf:', limits: { slots: c.slots ?? 1, maxLoaded: c.max_loaded ?? 1, maxWaitMs, holdMs } }
  if (spec.provider === 'openai' && (c.slots !== undefined || c.max_loaded !== undefined)) {
    const server = resolveOpenAiUrl(settings.base_url, env) ?? 'openai'
    return {
      server,
      limits: { slots: c.slots ?? Number.POSITIVE_INFINITY, maxLoaded: c.max_loaded ?? Number.POSITIVE_INFINITY, maxWaitMs, holdMs },
    }
  }
  return undefined
}

/** TEA's `provider: local` (or `backend: local`, which the loader turns into it). */
function isLocal(settings: LlmSettings): boolean {
  return settings.provider?.trim().toLowerCase() === 'local'
}

/** The model a call goes to; a GGUF path made absolute (relative to the agent file's folder). */
function modelOf(settings: LlmSettings, env: NodeJS.ProcessEnv): ModelSpec {
  const spec = resolveModel(settings.model, settings.provider, env, settings.shell_provider, settings.model_path)
  return spec.provider === 'gguf' ? { provider: 'gguf', model: ggufPath(spec.model, settings.model_dir) } : spec
}

/** How a GGUF model is run: TEA's n_ctx and threads, the queue's slots and max_loaded. */
function ggufOptions(settings: LlmSettings, limits: ServerLimits): GgufOptions {
  const whole = (key: 'n_ctx' | 'threads', min: number) =>
    settings[key] === undefined
      ? undefined
      : checkNumber(key, settings[key], (n) => Number.isInteger(n) && n >= min, `a whole number ≥ ${min}`)
  const contextSize = whole('n_ctx', 16)
  const threads = whole('threads', 1)
  return {
    slots: limits.slots,
    maxLoaded: limits.maxLoaded,
    ...(contextSize !== undefined && { contextSize }),
    ...(threads !== undefined && { threads }),
    ...(settings.chat_format !== undefined && { chatFormat: settings.chat_format }),
  }
}

/** A whole number ≥ 1 from the environment (Ollama's 0 means "decide yourself", which tells us nothing). */
function envCount(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const n = Number(env[name])
  return Number.isInteger(n) && n >= 1 ? n : undefined
}

function finish(reply: ProviderReply, spec: ModelSpec, settings: LlmSettings, attempts: number): LlmResult {
  const model = formatModelSpec(spec)
  const result: LlmResult = { content: reply.content, model, usage: reply.usage, attempts }
  if (reply.toolCalls?.length) result.tool_calls = reply.toolCalls
  if (settings.format === undefined || result.tool_calls) return result
  return { ...result, parsed: parseStructured(reply.content, settings.format, { model, attempts }) }
}

/** The final error of a call: how many attempts it took, and why a transient failure was not retried. */
function withAttempts(e: unknown, attempts: number, heldBack: number): unknown {
  if (!isTeaError(e)) return e
  const tokens = `${heldBack} token${heldBack === 1 ? '' : 's'}`
  const suffix =
    heldBack > 0
      ? ` (${attempts > 1 ? `attempt ${attempts}, ` : ''}not retried: ${tokens} had already been streamed)`
      : attempts > 1
        ? ` (gave up after ${attempts} attempts)`
        : ''
  const hint =
    e.hint ??
    (heldBack > 0
      ? 'the partial reply is already in the event stream; on_error: {mode: retry} on the node asks the model again'
      : undefined)
  return new TeaError(e.code, `${e.message}${suffix}`, {
    cause: e.cause,
    details: { ...e.details, attempts },
    ...(hint ? { hint } : {}),
  })
}

function checkNumber(key: string, value: unknown, ok: (n: number) => boolean, expected: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && ok(value)) return value
  throw new TeaError('INVALID_PARAMS', `llm ${key} must be ${expected}, got ${JSON.stringify(value)}`, {
    hint: `fix settings.llm.${key} in the agent or with.${key} on the node`,
  })
}
