/**
 * The shape of an agent file (SPEC §3.2), as valibot schemas: one definition gives the TypeScript types and the
 * structural validation. Objects are strict so a misspelt key is reported, not ignored. Cross-references
 * (goto targets, actions, templates) are checked afterwards in validate.ts, where the whole agent is known.
 */

import * as v from 'valibot'
import { allowEntryProblem } from '../core/http-policy.ts'
import { mqttSettingsSchema } from '../actions/mqtt-settings.ts'
import { agentsSettingsSchema, mcpSettingsSchema, sessionSettingsSchema } from '../actions/tea-sections.ts'

const name = v.pipe(v.string(), v.minLength(1, 'must not be empty'))
const seconds = v.pipe(v.number(), v.minValue(0, 'must be ≥ 0'))
const count = v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(0, 'must be ≥ 0'))

export const GotoRuleSchema = v.strictObject({ if: v.optional(v.string()), to: name })
export const GotoSchema = v.union([name, v.array(GotoRuleSchema)], 'must be a node name or a list of {if, to} rules')

/** `graceful` is TEA's name for `continue` (its error_handling/settings.py). */
const errorMode = v.picklist(['raise', 'continue', 'graceful', 'retry'])

export const OnErrorSchema = v.strictObject({
  mode: v.optional(errorMode),
  max_retries: v.optional(count),
  /** Seconds before the first retry; doubles each time. */
  retry_delay: v.optional(seconds),
  fallback: v.optional(name),
})

export const NodeSchema = v.strictObject({
  name,
  description: v.optional(v.string()),
  uses: v.optional(name),
  action: v.optional(name),
  with: v.optional(v.record(v.string(), v.unknown())),
  output: v.optional(v.union([name, v.record(v.string(), v.unknown())], 'must be a key name or a mapping')),
  run: v.optional(v.string()),
  /**
   * The language of `run:` (and of a `steps:` node's steps). Prolog, Lua and Python nodes are lowered onto their
   * engine's action when the file loads (tea-nodes.ts), so what is left here says JavaScript, or nothing; any other
   * value is named by the loader (references.ts), which knows the languages of the build's features.
   */
  language: v.optional(v.string()),
  goto: v.optional(GotoSchema),
  on_error: v.optional(OnErrorSchema),
  interrupt: v.optional(v.picklist(['before', 'after'])),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'))),
  /** TEA marks the node that joins parallel branches; tea reads the join from the edges, so this only informs. */
  fan_in: v.optional(v.boolean()),
  /** TEA's name for goto: a node name, or rules with `condition` for `if`. */
  next: v.optional(
    v.union(
      [name, v.array(v.strictObject({ condition: v.optional(v.string()), to: name }))],
      'must be a node name or a list of {condition, to} rules',
    ),
  ),
})

export const EdgeSchema = v.strictObject({
  from: name,
  to: v.union([name, v.pipe(v.array(name), v.minLength(1))], 'must be a node name or a list of node names'),
  fan_in: v.optional(name),
  /** TEA's conditional edge: a condition, or true/false beside `condition:` (agent/references.ts). */
  when: v.optional(v.union([v.string(), v.boolean()], 'must be a condition, true or false')),
  condition: v.optional(
    v.union([v.string(), v.strictObject({ type: v.string(), value: v.string() })], 'must be an expression or {type: expression, value}'),
  ),
  /** TEA's parallel spelling: one `type: parallel` edge per branch, each with the same `fan_in` (agent/load.ts). */
  type: v.optional(v.picklist(['parallel', 'normal'], "must be 'parallel' or 'normal'")),
  /**
   * TEA's strategy for a parallel edge: `thread` (and `process`) run the branches concurrently, as tea does;
   * `remote` (other hosts over SSH) is a warning, and the branches run in this process (agent/references.ts).
   */
  parallel_strategy: v.optional(
    v.picklist(['thread', 'process', 'remote'], "must be 'thread', 'process' or 'remote' (tea runs the branches in this process)"),
  ),
})

/** A command-line model (src/llm/shell-provider.ts). `verbose` is TEA's echo of the output; tea accepts and ignores it. */
export const ShellProviderSchema = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1, 'must name a command')),
  args: v.optional(v.array(v.string())),
  stdin_mode: v.optional(v.picklist(['pipe', 'file'], "must be 'pipe' or 'file'")),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'))),
  env: v.optional(v.record(v.string(), v.string())),
  verbose: v.optional(v.boolean()),
  description: v.optional(v.string()),
})

const shellProviders = v.record(v.string(), ShellProviderSchema)

export const LlmSettingsSchema = v.strictObject({
  model: v.optional(v.string()),
  /** TEA's provider beside a bare model name (src/llm/model-spec.ts). */
  provider: v.optional(v.string()),
  /** TEA's name for base_url. */
  api_base: v.optional(v.string()),
  shell_provider: v.optional(v.string()),
  shell_providers: v.optional(shellProviders),
  /** Run coding CLIs with their permission checks off (src/llm/shell-provider.ts, docs/llm.md); dangerous. */
  shell_skip_permissions: v.optional(v.boolean()),
  max_tokens: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
  /** TEA's defaults for its own actions; tea takes them as model / provider when those are not set. */
  default_model: v.optional(v.string()),
  default_provider: v.optional(v.string()),
  /** Sent to an OpenAI-compatible server; better in OPENAI_API_KEY or as ${VAR} than written in the file. */
  api_key: v.optional(v.string()),
  stop: v.optional(v.array(v.string())),
  options: v.optional(v.record(v.string(), v.unknown())),
  temperature: v.optional(v.number()),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'))),
  max_retries: v.optional(count),
  /** Bytes of reply text; default 4 MiB (src/llm/settings.ts). */
  max_reply_bytes: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
  base_url: v.optional(v.string()),
  format: v.optional(v.union([v.literal('json'), v.record(v.string(), v.unknown())])),
  keep_alive: v.optional(v.union([v.string(), v.number()])),
  /** A fixed sampling seed (Ollama's options.seed, an OpenAI-compatible server's seed, a GGUF model's). */
  seed: v.optional(v.pipe(v.number(), v.integer('must be a whole number'))),
  /** TEA's `local` (llama.cpp in the process: a GGUF model), `api` or `auto` (src/llm/gguf/, docs/llm.md). */
  backend: v.optional(v.string()),
  /** TEA's GGUF file for provider/backend local; relative to the agent file. */
  model_path: v.optional(v.string()),
  /** A GGUF model's context, tokens. */
  n_ctx: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(16, 'must be ≥ 16'))),
  /** CPU threads for a GGUF model; TEA's `n_threads` is the same. */
  threads: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
  n_threads: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
  /** TEA's llama.cpp GPU layers: accepted, and ignored (GGUF models run on the CPU). */
  n_gpu_layers: v.optional(v.number()),
  /** TEA's llama.cpp chat format: overrides the GGUF file's template (src/llm/gguf/chat-format.ts). */
  chat_format: v.optional(v.string()),
  /** How calls queue for the model server (src/llm/call-scheduler.ts); false sends every call at once. */
  scheduler: v.optional(
    v.union([
      v.boolean(),
      v.strictObject({
        slots: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
        max_loaded: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
        max_wait: v.optional(v.pipe(v.number(), v.minValue(0, 'must be ≥ 0'))),
        hold: v.optional(v.pipe(v.number(), v.minValue(0, 'must be ≥ 0'))),
      }),
    ]),
  ),
})

export const CheckpointSettingsSchema = v.strictObject({ keep: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))) })

/** One entry of `settings.http.allow`: a host name, an address or a CIDR (core/http-policy.ts). */
const httpAllowEntry = v.pipe(
  v.string(),
  v.check(
    (entry) => allowEntryProblem(entry) === undefined,
    (issue) => allowEntryProblem(String(issue.input))!,
  ),
)

/**
 * TEA's `settings.parallel`: how parallel branches run. `thread` (TEA's default) and `process` are what tea does
 * anyway: branches run concurrently, and their Python, Lua and Prolog code on the worker pool's threads, off the main
 * thread (the CPU-bound case TEA's `process` is for). `max_workers` is TEA's cap on concurrent branches; tea runs a
 * fan-out's branches all at once. `remote` (branches on other hosts over SSH) is refused.
 */
const ParallelSettingsSchema = v.strictObject({
  strategy: v.optional(
    v.picklist(
      ['thread', 'process'],
      "must be 'thread' or 'process' (tea runs the branches concurrently in this process); 'remote' runs them on other hosts over SSH, which tea does not provide",
    ),
  ),
  max_workers: v.optional(v.nullable(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1')))),
})

export const SettingsSchema = v.strictObject({
  llm: v.optional(LlmSettingsSchema),
  max_steps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'must be ≥ 1'))),
  workspace: v.optional(v.string()),
  allow_inline_code: v.optional(v.boolean()),
  /** Default time limit for `run:` code, seconds. */
  run_timeout: v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'))),
  /** The language of unmarked `run:` bodies: javascript or a feature's (references.ts checks it). */
  run_language: v.optional(v.string()),
  /** Most memory one `run:` node's code may take, MiB (docs/security.md); past it the node fails with NODE_MEMORY_LIMIT. */
  run_memory_mb: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(16, 'must be ≥ 16'))),
  parallel: v.optional(ParallelSettingsSchema),
  /** Outbound HTTP (`http.*`, `web.scrape`, tools): the hosts and CIDRs allowed beyond the default policy (docs/security.md). */
  http: v.optional(v.strictObject({ allow: v.optional(v.array(httpAllowEntry)) })),
  checkpoint: v.optional(CheckpointSettingsSchema),
  /** TEA's tracing: with auto_trace and trace_exporter: file, every run event goes to trace_file as NDJSON. */
  auto_trace: v.optional(v.boolean()),
  trace_exporter: v.optional(v.picklist(['console', 'file'], "tea traces to 'file' (or 'console': its progress lines)")),
  trace_file: v.optional(v.string()),
  auto_trace_llm_payloads: v.optional(v.boolean()),
  /** TEA's command-line models, by name (the same as settings.llm.shell_providers). */
  shell_providers: v.optional(shellProviders),
  /** Most text one template render may build, bytes; default 1 MiB (src/template/values.ts). */
  max_template_bytes: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
  planner: v.optional(v.record(v.string(), v.unknown())),
  /** TEA's named rate limiters for ratelimit.wrap (actions/ratelimit): {name: {rpm | rps}}. */
  rate_limiters: v.optional(
    v.record(
      v.string(),
      v.strictObject({
        rpm: v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'))),
        rps: v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'))),
      }),
    ),
  ),
  /** TEA's long-term memory (actions/ltm): `backend` says where; the local ones are tea's store. */
  ltm: v.optional(v.record(v.string(), v.unknown())),
  /** TEA's named sub-agents, for its agent.* actions (actions/agent). */
  agents: v.optional(agentsSettingsSchema),
  /** TEA's session store, for its session.* actions (actions/session): kept in tea's store. */
  session: v.optional(sessionSettingsSchema),
  /** The MQTT broker of mqtt.publish (actions/mqtt): url, username, password or password_file, TLS files. */
  mqtt: v.optional(mqttSettingsSchema),
  /** The MCP servers whose tools the agent uses (tools.mcp, reason.react's mcp.<server>.<tool>; docs/integrations.md). */
  mcp: v.optional(mcpSettingsSchema),
  /** TEA's run-wide on_error: each node's on_error falls back to it field by field (agent/load.ts). */
  error_handling: v.optional(
    v.strictObject({ mode: v.optional(errorMode), max_retries: v.optional(count), retry_delay: v.optional(seconds) }),
  ),
})

export const ConfigSchema = v.strictObject({
  interrupt_before: v.optional(v.array(name)),
  interrupt_after: v.optional(v.array(name)),
  /** TEA: raise node errors or yield them as an error event. Both stop the run in TEA, and so tea does. */
  raise_exceptions: v.optional(v.boolean()),
  /** TEA: where interrupt checkpoints are saved. tea checkpoints every step into its store (--data-dir). */
  checkpoint_dir: v.optional(v.string()),
  /** A time limit for the run, in ms (TEA's spelling); past it the run fails with RUN_TIMEOUT, resumable. */
  max_execution_time: v.optional(v.pipe(v.number(), v.integer('must be a whole number of ms'), v.minValue(1, 'must be ≥ 1'))),
})

export const AgentSchema = v.strictObject({
  /** Optional, as in TEA: the file's name (without .yaml) when absent. */
  name: v.optional(name),
  description: v.optional(v.string()),
  version: v.optional(v.union([v.string(), v.number()])),
  state_schema: v.optional(v.record(v.string(), v.unknown())),
  initial_state: v.optional(v.record(v.string(), v.unknown())),
  variables: v.optional(v.record(v.string(), v.unknown())),
  settings: v.optional(SettingsSchema),
  nodes: v.pipe(v.array(NodeSchema), v.minLength(1, 'must list at least one node')),
  edges: v.optional(v.array(EdgeSchema)),
  config: v.optional(ConfigSchema),
  /** validate.extraction's defaults, as TEA places them (actions/validate/extraction.ts). */
  extraction_schema: v.optional(v.record(v.string(), v.unknown())),
  semantic_probes: v.optional(v.union([v.array(v.unknown()), v.record(v.string(), v.unknown())])),
  validation_constraints: v.optional(v.union([v.string(), v.record(v.string(), v.unknown())])),
  /** TEA's logging of validation outcomes; accepted, not used (results are in the run's state and trace). */
  validation_logging: v.optional(v.record(v.string(), v.unknown())),
})

/** The mappings of an agent file by path (`*`: a list index or a mapping key), and the keys each one takes. */
const MAPPINGS: ReadonlyArray<[string, { entries: Record<string, unknown> }]> = [
  ['', AgentSchema],
  ['nodes.*', NodeSchema],
  ['nodes.*.on_error', OnErrorSchema],
  ['nodes.*.goto.*', GotoRuleSchema],
  ['nodes.*.next.*', v.strictObject({ condition: v.optional(v.string()), to: name })],
  ['edges.*', EdgeSchema],
  ['settings', SettingsSchema],
  ['settings.llm', LlmSettingsSchema],
  ['settings.checkpoint', CheckpointSettingsSchema],
  ['settings.parallel', ParallelSettingsSchema],
  ['settings.shell_providers.*', ShellProviderSchema],
  ['settings.llm.shell_providers.*', ShellProviderSchema],
  ['config', ConfigSchema],
]

/** The keys the mapping at `path` takes, or undefined for a path that is not one of the file's mappings. */
export function keysAt(path: ReadonlyArray<string | number>): string[] | undefined {
  const general = path.map((p) => (typeof p === 'number' ? '*' : p))
  for (const [pattern, schema] of MAPPINGS) {
    const parts = pattern === '' ? [] : pattern.split('.')
    if (parts.length === general.length && parts.every((p, i) => p === '*' || p === general[i])) return Object.keys(schema.entries)
  }
  return undefined
}

export type AgentFile = v.InferOutput<typeof AgentSchema>
export type GotoRule = v.InferOutput<typeof GotoRuleSchema>
