/**
 * The model-provider port. Actions never talk to a provider directly: they call an `LlmClient`, which resolves
 * the model string (`ollama:qwen2.5:1.5b`, `openai:gpt-4o-mini`), applies `settings.llm` defaults, the timeout
 * and transient-only retries, and records or replays exchanges for cassettes.
 */

export type JsonSchema = Record<string, unknown>

/** A command-line model (shell-provider.ts): `settings.shell_providers.<name>`. */
export interface ShellProviderConfig {
  command: string
  args?: string[]
  stdin_mode?: 'pipe' | 'file'
  /** Seconds. */
  timeout?: number
  env?: Record<string, string>
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
}

/** `settings.llm.scheduler`: how calls queue for a model server (call-scheduler.ts). */
export interface SchedulerSettings {
  /** Calls the server works on at once (Ollama: OLLAMA_NUM_PARALLEL, default 1). */
  slots?: number
  /** Models the server keeps loaded at once (Ollama: OLLAMA_MAX_LOADED_MODELS, default 1). */
  max_loaded?: number
  /** Seconds a call may be passed over for calls to the loaded model (default 30). */
  max_wait?: number
  /** Seconds a model that just answered is kept loaded for its caller's next call before another evicts it (default 0.1). */
  hold?: number
}

/** `settings.llm` and the matching per-call parameters; every field optional, per-call wins. */
export interface LlmSettings {
  /** `provider:model`, e.g. `ollama:qwen2.5:1.5b`, or a bare name beside `provider` (model-spec.ts). */
  model?: string
  /** TEA's provider key: `ollama`, `openai`, `auto`, `litellm`, `shell`, `local` (model-spec.ts `resolveModel`). */
  provider?: string
  /** With `provider: shell`: which command-line model (a key of `shell_providers`, or one TEA knows). */
  shell_provider?: string
  /** Command-line models by name (shell-provider.ts); set in settings, not per call. */
  shell_providers?: Record<string, ShellProviderConfig>
  /**
   * Settings only: run the coding CLIs with their permission checks off (`claude --dangerously-skip-permissions`,
   * `codex --yolo`, and such flags in an agent's own providers). Off by default (shell-provider.ts).
   */
  shell_skip_permissions?: boolean
  temperature?: number
  /** Seconds for one attempt. Default 120. */
  timeout?: number
  /** Retries of transient failures after the first attempt. Default 2. */
  max_retries?: number
  /** The largest reply accepted, in bytes of text (UTF-8). Default 4 MiB. */
  max_reply_bytes?: number
  /** Overrides OLLAMA_HOST / OPENAI_BASE_URL for this agent. */
  base_url?: string
  /** `json`, or a JSON Schema the reply must follow (structured output). */
  format?: 'json' | JsonSchema
  keep_alive?: string | number
  /** The key sent to an OpenAI-compatible server (else OPENAI_API_KEY); TEA agents set it in settings.llm. */
  api_key?: string
  /** The most tokens the reply may have (Ollama's `num_predict`). */
  max_tokens?: number
  /** Sequences that end the reply. */
  stop?: string[]
  /** Model options passed on as they are: Ollama's `options` (`num_ctx`, `top_k`…), top-level fields for an OpenAI-compatible server. */
  options?: Record<string, unknown>
  /** A fixed sampling seed: with temperature 0 (or the same seed) a model gives the same reply every run. */
  seed?: number
  /** TEA's GGUF file for `provider: local` / `backend: local` (`gguf:<path>` says the same in one string). */
  model_path?: string
  /** A GGUF model's context, in tokens (TEA's llama.cpp key); default 2048, at most what the model was trained with. */
  n_ctx?: number
  /** CPU threads a GGUF model computes with (TEA's `n_threads`); default: one fewer than the cores, 1 to 4. */
  threads?: number
  /** TEA's llama.cpp GPU layers: accepted, and ignored (tea runs GGUF models on the CPU). */
  n_gpu_layers?: number
  /** TEA's llama.cpp chat format (`chatml`, `llama-2`, `gemma`, …): overrides the template in the GGUF file. */
  chat_format?: string
  /** Settings only, set by the loader: the agent file's folder, which relative GGUF paths start from. */
  model_dir?: string
  /** Settings only: the call scheduler's limits, or false to send every call at once. */
  scheduler?: boolean | SchedulerSettings
}

/** A tool offered to the model through the server's tool calling (Ollama's and OpenAI's `tools`). */
export interface ToolDefinition {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema }
}

/** A tool the model asked to call. */
export interface ToolCall {
  name: string
  arguments: Record<string, unknown>
}

export interface LlmRequest extends LlmSettings {
  messages: ChatMessage[]
  /** Tools the model may call; a call that uses them is not streamed, and its reply may carry `tool_calls`. */
  tools?: ToolDefinition[]
  /** Called with each token as it arrives; a provider streams when this is set. */
  onToken?: (token: string) => void
  signal?: AbortSignal
}

export interface LlmUsage {
  prompt_tokens: number
  completion_tokens: number
}

export interface LlmResult {
  content: string
  /** Present when `format` was given and the reply parsed as JSON. */
  parsed?: unknown
  /** The model string actually used, `provider:model`. */
  model: string
  usage: LlmUsage
  /** How many attempts it took (1 = first try). */
  attempts: number
  /** The tools the model called, when the request offered some and the model used them. */
  tool_calls?: ToolCall[]
}

/** One provider: a single attempt, no retries (the client retries). */
export interface LlmProvider {
  readonly name: string
  chat(request: ProviderRequest): Promise<ProviderReply>
  /** One vector per input text; providers without embeddings leave it out. */
  embed?(request: ProviderEmbedRequest): Promise<number[][]>
}

export interface ProviderRequest {
  model: string
  messages: ChatMessage[]
  temperature?: number
  format?: 'json' | JsonSchema
  keep_alive?: string | number
  maxTokens?: number
  apiKey?: string
  stop?: string[]
  options?: Record<string, unknown>
  baseUrl?: string
  timeoutMs: number
  /** `max_reply_bytes`: past this many bytes of reply text, the attempt stops reading and fails. */
  maxReplyBytes: number
  onToken?: (token: string) => void
  signal?: AbortSignal
  tools?: ToolDefinition[]
  seed?: number
  /** For a `gguf:` model: how it is loaded and run in the process. */
  gguf?: GgufOptions
}

/** How a GGUF model is loaded and run in the process (src/llm/gguf/). */
export interface GgufOptions {
  /** Context size in tokens, per call at once. */
  contextSize?: number
  threads?: number
  /** Calls to the model at once (settings.llm.scheduler.slots): one context sequence each. */
  slots: number
  /** GGUF models kept in memory at once (settings.llm.scheduler.max_loaded). */
  maxLoaded: number
  chatFormat?: string
}

export interface ProviderEmbedRequest {
  model: string
  input: string[]
  baseUrl?: string
  apiKey?: string
  timeoutMs: number
  signal?: AbortSignal
  gguf?: GgufOptions
}

export interface ProviderReply {
  content: string
  usage: LlmUsage
  toolCalls?: ToolCall[]
}

/** One embeddings call: texts in, one vector per text out. Settings as for a chat call. */
export interface EmbedRequest extends Pick<LlmSettings, 'model' | 'provider' | 'base_url' | 'timeout' | 'api_key' | 'model_path'> {
  input: string[]
  signal?: AbortSignal
}

export interface EmbedResult {
  embeddings: number[][]
  /** `provider:model`. */
  model: string
}

export interface LlmClient {
  call(request: LlmRequest): Promise<LlmResult>
  /** Embeddings (Ollama's `/api/embed`, OpenAI's `/v1/embeddings`); absent where a client has none. */
  embed?(request: EmbedRequest): Promise<EmbedResult>
  /** Writes any pending cassette entries. */
  close(): Promise<void>
}
