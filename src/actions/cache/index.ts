/**
 * TEA's `cache.wrap`, `cache.get` and `cache.invalidate`: an action's result kept in long-term memory (ltm.ts's
 * `tea.ltm` collection) under `cache:<agent>:<action>:<sha256 of its args as sorted JSON>` (or `cache:<agent>:<key>`),
 * with TEA's metadata (`_cache_type: action_result`, `_cache_action`, `_cache_key`, `_cache_created_at`,
 * `_cache_expires_at`, ISO times) and TEA's result shapes. The agent part is `agent` (see agentPrefix);
 * `key_prefix: false` leaves it out. A failed action's result
 * is not cached; a cache that cannot be read or written is passed over, as in TEA.
 */

import { createHash } from 'node:crypto'
import * as v from 'valibot'
import { errorMessage } from '../../core/errors.ts'
import { ltmDelete, ltmFind, ltmGet, ltmPut } from '../ltm/index.ts'
import { defineAction, type Action, type ActionContext } from '../types.ts'

const DEFAULT_TTL_S = 60 * 86400

/**
 * TEA puts the agent's name here; tea's actions do not see it, so every agent's keys share the part `agent:`. Two
 * agents caching the same action with the same args share the entry, which is the result either would store.
 */
function agentPrefix(on: boolean): string {
  return on ? 'agent:' : ''
}

function fullKey(key: string): string {
  return key.startsWith('cache:') ? key : `cache:${key}`
}

function sortedJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(sortedJson).join(', ')}]`
  if (x && typeof x === 'object') {
    const entries = Object.keys(x)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${sortedJson((x as Record<string, unknown>)[k])}`)
    return `{${entries.join(', ')}}`
  }
  return JSON.stringify(x) ?? 'null'
}

const expired = (metadata: Record<string, unknown> | null): boolean => {
  const at = Date.parse(String(metadata?._cache_expires_at ?? ''))
  return !Number.isFinite(at) || Date.now() >= at
}

const cacheWrap = defineAction({
  name: 'cache.wrap',
  description:
    "TEA's cache.wrap: runs `action` with `args` unless its result is cached (long-term memory, ttl default 60 days); returns {success, result, _cache_hit, _cache_key, _cache_created_at?}.",
  params: v.object({
    action: v.pipe(v.string(), v.minLength(1), v.description('The action to run, e.g. llm.call.')),
    args: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.description('Its parameters.')), {}),
    key: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.description('A key of your own instead of the hash of args.'))),
    key_strategy: v.optional(
      v.pipe(v.picklist(['args', 'sha256', 'custom']), v.description('args: hash of all args; sha256: hash of args[key_source].')),
      'args',
    ),
    key_source: v.optional(v.pipe(v.string(), v.description('The arg hashed by key_strategy: sha256.'))),
    ttl_days: v.optional(v.pipe(v.number(), v.minValue(0))),
    ttl_hours: v.optional(v.pipe(v.number(), v.minValue(0))),
    ttl_seconds: v.optional(v.pipe(v.number(), v.minValue(0))),
    skip_cache: v.optional(v.pipe(v.boolean(), v.description('Run the action and refresh the cache.')), false),
    cache_enabled: v.optional(v.pipe(v.boolean(), v.description('false: just run the action.')), true),
    key_prefix: v.optional(v.pipe(v.boolean(), v.description('Put the agent name in the key (default true).')), true),
    cleanup_probability: v.optional(v.number()),
    cleanup_limit: v.optional(v.number()),
  }),
  async run(p, ctx) {
    const call = async () => {
      const result = await ctx.invoke(p.action, p.args)
      return { result, ok: (result as { success?: unknown }).success !== false }
    }
    if (!p.cache_enabled) {
      const { result, ok } = await call()
      return { success: ok, result, _cache_hit: false, _cache_key: null }
    }
    const prefix = agentPrefix(p.key_prefix)
    let key: string
    if (p.key) key = p.key.startsWith('cache:') ? p.key : `cache:${prefix}${p.key}`
    else {
      const source = p.key_strategy === 'sha256' && p.key_source ? String(p.args[p.key_source] ?? '') : sortedJson(p.args)
      key = `cache:${prefix}${p.action}:${createHash('sha256').update(source).digest('hex')}`
    }
    if (!p.skip_cache) {
      const hit = await ltmGet(ctx, key).catch(() => undefined)
      if (hit && !expired(hit.metadata)) {
        const value = hit.value as { result?: unknown } | null
        return {
          success: true,
          result: value?.result ?? value,
          _cache_hit: true,
          _cache_key: key,
          _cache_created_at: hit.metadata?._cache_created_at ?? null,
        }
      }
    }
    const { result, ok } = await call()
    if (ok) {
      const ttl =
        p.ttl_seconds ?? (p.ttl_hours !== undefined ? p.ttl_hours * 3600 : p.ttl_days !== undefined ? p.ttl_days * 86400 : DEFAULT_TTL_S)
      const now = new Date()
      const metadata = {
        _cache_type: 'action_result',
        _cache_action: p.action,
        _cache_key: key,
        _cache_created_at: now.toISOString(),
        _cache_expires_at: new Date(now.getTime() + ttl * 1000).toISOString(),
      }
      await ltmPut(ctx, key, { result }, metadata).catch((e) =>
        ctx.emit({ type: 'log', node: ctx.node, message: `cache.wrap: not cached: ${errorMessage(e)}` }),
      )
    }
    return { success: ok, result, _cache_hit: false, _cache_key: key }
  },
})

const cacheGet = defineAction({
  name: 'cache.get',
  description: "TEA's cache.get: a cached result by key; returns {success, found, value, expired, metadata?}.",
  params: v.object({
    key: v.pipe(v.string(), v.minLength(1, 'key is required'), v.maxLength(256)),
    include_metadata: v.optional(v.boolean(), false),
  }),
  async run(p, ctx) {
    const hit = await ltmGet(ctx, fullKey(p.key))
    if (!hit) return { success: true, found: false, value: null, expired: false }
    const value = hit.value as { result?: unknown } | null
    return {
      success: true,
      found: true,
      value: value?.result ?? value,
      expired: expired(hit.metadata),
      ...(p.include_metadata && { metadata: hit.metadata }),
    }
  },
})

const cacheInvalidate = defineAction({
  name: 'cache.invalidate',
  description:
    "TEA's cache.invalidate: deletes cached results by key, key pattern (* wildcards) or metadata filter; returns {success, deleted_count, deleted_keys}.",
  params: v.pipe(
    v.object({
      key: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
      pattern: v.optional(
        v.pipe(
          v.string(),
          v.maxLength(256),
          // Each * is a .* in a regular expression: a few keep matching linear enough on a 256-character key.
          v.check((s) => s.split('*').length <= 9, 'pattern may hold at most 8 *'),
          v.description('A key pattern; * matches any run of characters.'),
        ),
      ),
      metadata_filter: v.optional(v.record(v.string(), v.unknown())),
    }),
    v.check(
      (p) => p.key !== undefined || p.pattern !== undefined || p.metadata_filter !== undefined,
      'at least one of key, pattern or metadata_filter is required',
    ),
  ),
  async run(p, ctx) {
    const deleted: string[] = []
    if (p.key && (await ltmDelete(ctx, [fullKey(p.key)]))) deleted.push(fullKey(p.key))
    if (p.pattern !== undefined || p.metadata_filter) {
      const glob =
        p.pattern === undefined
          ? undefined
          : new RegExp(
              `^${p.pattern
                .split('*')
                .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
                .join('.*')}$`,
            )
      const found = await ltmFind(ctx, undefined, { ...p.metadata_filter, _cache_type: 'action_result' }, 1000)
      const keys = found.map((e) => e.key).filter((k) => !glob || glob.test(k))
      if (keys.length && (await ltmDelete(ctx, keys))) deleted.push(...keys)
    }
    return { success: true, deleted_count: deleted.length, deleted_keys: deleted }
  },
})

export const cacheActions: Action[] = [cacheWrap, cacheGet, cacheInvalidate]
