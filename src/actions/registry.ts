/**
 * name → action: one implementation for a registry built whole (`createRegistry`: the library, tests) and one filled
 * on first use, a group of actions at a time (`createLazyRegistry`: src/catalog.ts for `tea run`, `validate`,
 * `serve` …; src/features.ts, whose core actions are there from the start), so that a run evaluates only the action
 * modules its agent names.
 * `validateParams` is the one place parameters are checked, so every caller (the engine, a worker thread,
 * `ctx.invoke`) reports the same INVALID_PARAMS error listing every issue with its path.
 */

import * as v from 'valibot'
import { TeaError } from '../core/errors.ts'
import { toIssues, type Issue, type Where } from '../core/issues.ts'
import { closest } from '../core/util.ts'
import type { Action } from './types.ts'

export interface Registry {
  get(name: string): Action | undefined
  /** Like get, but throws UNKNOWN_ACTION with the closest names (or the missing build feature). */
  require(name: string): Action
  list(): Action[]
  /**
   * Makes the actions `names` (every action, without it) available to get, require and list. A registry built
   * whole has them already; a lazy one loads their modules (an unknown name, or an action that runs others by
   * name, loads them all).
   */
  load(names?: Iterable<string>): Promise<void>
  /** The UNKNOWN_ACTION error for `name`, named at `where`: the closest known names, or the feature this build lacks. */
  unknown(name: string, where?: Where): TeaError
  /** What the registry was told of the optional features (src/feature-list.ts); none for a registry of given actions. */
  features?: FeatureFacts
}

/**
 * Actions loaded together on first use: those whose names start with one of `prefixes` and a dot. A group whose
 * actions run or list other actions by name (`flow.map`, `tools.list`, `retry.loop` …) says `dispatches`, and
 * loading it loads every group, since which ones it will reach is known only when it runs.
 */
export interface ActionGroup {
  prefixes: readonly string[]
  dispatches?: boolean
  load(): Promise<readonly Action[]>
}

/** What a registry knows of the optional features (src/feature-list.ts), whether this build has them or not. */
export interface FeatureFacts {
  /** The feature this build lacks that would have action `name`, and the release builds that have it. */
  lacking(name: string): { feature: string; builds: readonly string[] } | undefined
  /** The `run:` languages besides JavaScript (each a feature's `<language>.run`). */
  languages: readonly string[]
}

export function createRegistry(actions: readonly Action[], features?: FeatureFacts): Registry {
  return createLazyRegistry([], actions, features)
}

/**
 * A registry of `groups` (and `extra` actions, there from the start) that loads a group's modules when one of its
 * actions is asked for with `load`. get, require and list see only what is loaded: load before them. A group may
 * hold actions that are among `extra` already (the same objects): they are not added twice.
 */
export function createLazyRegistry(groups: readonly ActionGroup[], extra: readonly Action[] = [], features?: FeatureFacts): Registry {
  const byName = new Map<string, Action>()
  const add = (a: Action): void => {
    const had = byName.get(a.name)
    if (had === a) return
    if (had) throw new TeaError('INTERNAL', `action ${a.name} registered twice`)
    byName.set(a.name, a)
  }
  for (const a of extra) add(a)
  const loading = new Map<ActionGroup, Promise<void>>()
  const loaded = new Set<ActionGroup>()
  const loadGroup = (g: ActionGroup): Promise<void> => {
    let p = loading.get(g)
    if (!p)
      loading.set(
        g,
        (p = g.load().then((actions) => {
          actions.forEach(add)
          loaded.add(g)
        })),
      )
    return p
  }
  const groupOf = (name: string): ActionGroup | undefined => groups.find((g) => g.prefixes.some((p) => name.startsWith(`${p}.`)))
  const loadAll = async (): Promise<void> => {
    await Promise.all(groups.map(loadGroup))
  }
  const unknown = (name: string, where?: Where): TeaError => {
    const g = groupOf(name)
    if (g && !loaded.has(g))
      return new TeaError('INTERNAL', `action '${name}' is not loaded: await registry.load() (or load(['${name}'])) before asking for it`, {
        where,
      })
    return unknownAction(name, byName.keys(), where, features)
  }
  return {
    get: (name) => byName.get(name),
    require(name) {
      const action = byName.get(name)
      if (action) return action
      throw unknown(name)
    },
    list: () => [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)),
    async load(names) {
      if (names === undefined) return loadAll()
      const all = [...names]
      // An action that runs others by name needs them all, whether it is loaded already (a core one) or not.
      if (all.some((n) => groupOf(n)?.dispatches)) return loadAll()
      const wanted = all.filter((n) => !byName.has(n))
      const found = wanted.map(groupOf)
      if (found.some((g) => g === undefined)) return loadAll()
      await Promise.all(found.map((g) => loadGroup(g!)))
      // A name its group lacks is unknown: every group, so that the error names the closest actions.
      if (wanted.some((n) => !byName.has(n))) return loadAll()
    },
    unknown,
    ...(features && { features }),
  }
}

/**
 * UNKNOWN_ACTION naming the closest actions, or the feature this build lacks that has it (`features`); `where` is
 * the place that named it.
 */
export function unknownAction(name: string, known: Iterable<string>, where?: Where, features?: FeatureFacts): TeaError {
  const names = [...known]
  const lacking = features?.lacking(name)
  if (lacking) {
    const { feature, builds } = lacking
    return new TeaError('UNKNOWN_ACTION', `unknown action '${name}': this build lacks the '${feature}' feature`, {
      where,
      hint: builds.length
        ? `use a tea build with the ${feature} feature: ${listed(builds, 'or')}`
        : `no release build has the ${feature} feature`,
      details: { action: name, feature, builds },
    })
  }
  const near = closest(name, names)
  const suggestion = near.length ? ` (did you mean ${near.map((n) => `'${n}'`).join(', ')}?)` : ''
  return new TeaError('UNKNOWN_ACTION', `unknown action '${name}'${suggestion}`, {
    where,
    hint: "'tea actions' lists every action",
    details: { action: name, closest: near },
  })
}

/** Every problem with `params` against the action's schema, each with its path; empty when valid. */
export function paramIssues(action: Action, params: unknown): Issue[] {
  const result = v.safeParse(action.params, params ?? {})
  return [...unknownParams(action, params), ...(result.success ? [] : toIssues(result.issues))]
}

/**
 * Keys of `params` the action does not take. Action schemas are plain objects, which would drop them silently
 * at run time; an agent file that names a parameter that does nothing is an error at load instead (a typo, or a
 * parameter another runtime has). Actions whose params are an open mapping take any key.
 */
function unknownParams(action: Action, params: unknown): Issue[] {
  const keys = paramKeys(action.params)
  if (!keys || typeof params !== 'object' || params === null || Array.isArray(params)) return []
  return Object.keys(params)
    .filter((k) => !keys.includes(k))
    .map((k) => {
      const near = closest(k, keys)
      return {
        code: 'unknown_parameter',
        message: `unknown parameter '${k}' for ${action.name}${near.length ? ` (did you mean '${near[0]}'?)` : ''}; it takes: ${keys.join(', ')}`,
        path: [k],
      }
    })
}

/** The top-level keys an object schema (possibly inside a pipe) declares; undefined for any other schema. */
function paramKeys(schema: unknown): string[] | undefined {
  const s = schema as { type?: string; entries?: Record<string, unknown>; pipe?: unknown[] }
  if ((s.type === 'object' || s.type === 'strict_object' || s.type === 'loose_object') && s.entries)
    return s.type === 'loose_object' ? undefined : Object.keys(s.entries)
  if (Array.isArray(s.pipe) && s.pipe.length > 0) return paramKeys(s.pipe[0])
  return undefined
}

/** The params as the action's schema outputs them, or INVALID_PARAMS at `where` listing every issue. */
export function validateParams<P>(action: Action<P>, params: unknown, where?: Where): P {
  const result = v.safeParse(action.params, params ?? {})
  if (result.success) return result.output
  throw new TeaError('INVALID_PARAMS', `invalid parameters for ${action.name}`, {
    where,
    issues: toIssues(result.issues),
    details: { action: action.name },
  })
}

/** `a, b and c` (or `or`). */
export function listed(items: readonly string[], and = 'and'): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${and} ${items.at(-1)}`
}
