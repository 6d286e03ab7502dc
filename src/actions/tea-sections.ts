/**
 * The shapes of TEA's settings sections that the loader checks when a file loads (src/agent/schema.ts) and the
 * actions read when they run: `settings.agents` (actions/agent) and `settings.session` (actions/session). They
 * sit here, outside the action groups, so that loading a file does not load those groups (test/catalog.test.ts).
 */

import * as v from 'valibot'

/** Most agents one file may define, and one action may name: each is a model call, often several. */
export const MAX_AGENTS = 64

const seconds = v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.maxValue(3600, 'must be ≤ 3600 seconds'))

const agentShape = v.looseObject({
  model: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  /** tea's own: which server a bare model name goes to (else settings.llm.provider). */
  provider: v.optional(v.string()),
  system_prompt: v.optional(v.pipe(v.string(), v.maxLength(1_000_000, 'must be at most 1,000,000 characters'))),
  temperature: v.optional(v.pipe(v.number(), v.minValue(0, 'must be between 0.0 and 2.0'), v.maxValue(2, 'must be between 0.0 and 2.0'))),
  max_tokens: v.optional(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'))),
  /** TEA lists tool names here and never hands them to the model (its dispatch calls llm.call without tools). */
  tools: v.optional(v.array(v.string())),
  timeout: v.optional(seconds),
  retry: v.optional(
    v.looseObject({
      max_attempts: v.optional(
        v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be ≥ 1'), v.maxValue(10, 'must be ≤ 10')),
      ),
      backoff: v.optional(v.pipe(v.number(), v.minValue(1, 'must be ≥ 1'), v.maxValue(10, 'must be ≤ 10'))),
    }),
  ),
})

/** `settings.agents` as the loader checks it. */
export const agentsSettingsSchema = v.pipe(
  v.record(v.pipe(v.string(), v.minLength(1, 'an agent name must not be empty')), agentShape),
  v.check((m) => Object.keys(m).length <= MAX_AGENTS, `at most ${MAX_AGENTS} agents`),
)

/** TEA's `settings.session` (its session/settings.py). */
export const sessionSettingsSchema = v.looseObject({
  backend: v.optional(
    v.picklist(['memory', 'firestore'], "backend must be 'memory' or 'firestore' (tea keeps sessions in its store either way)"),
  ),
  collection: v.optional(v.string()),
  auto_save: v.optional(v.boolean()),
  ttl: v.optional(v.pipe(v.number(), v.integer('must be a whole number of seconds'), v.minValue(0, 'must be ≥ 0 (0: never expires)'))),
  persist_fields: v.optional(v.union([v.string(), v.array(v.string())])),
})

/** An MCP server's name in `settings.mcp.servers`: a tool of it is `mcp.<server>.<tool>`, so no dot. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/

const mcpTimeout = v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.maxValue(3600, 'must be ≤ 3600 seconds')))

/** One MCP server: a program tea starts and talks to over its stdin and stdout, or a streamable HTTP endpoint. */
export const mcpServerSchema = v.union(
  [
    v.strictObject({
      command: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
      args: v.optional(v.array(v.string())),
      env: v.optional(v.record(v.string(), v.string())),
      cwd: v.optional(v.string()),
      timeout: mcpTimeout,
    }),
    v.strictObject({
      url: v.pipe(v.string(), v.url('must be an http:// or https:// URL'), v.regex(/^https?:\/\//i, 'must be an http:// or https:// URL')),
      headers: v.optional(v.record(v.string(), v.string())),
      timeout: mcpTimeout,
    }),
  ],
  'must be {command, args?, env?, cwd?} (a program over stdio) or {url, headers?} (streamable HTTP)',
)

/** tea's `settings.mcp`: the MCP servers an agent uses, by name, and the default time limit of a call, seconds. */
export const mcpSettingsSchema = v.strictObject({
  servers: v.pipe(
    v.record(v.pipe(v.string(), v.regex(MCP_SERVER_NAME, 'a server name is letters, digits, _ and - (at most 64)')), mcpServerSchema),
    v.check((m) => Object.keys(m).length <= 32, 'at most 32 servers'),
  ),
  timeout: mcpTimeout,
})
