/**
 * The optional features, declared once (SPEC §2, issue 34). Each entry is everything the rest of tea knows of a
 * feature: its name (which is also its build flag, `__FEATURE_<NAME>__`, and its key in a target file's
 * `features`), the action namespaces it adds, the pool task kinds its workers handle, the `run:` language it runs,
 * the files it reads beside the bundle, the commands it adds, and its entry module. The build (build.mjs,
 * scripts/build/features.mjs), the registries (catalog.ts, features.ts), the pool's worker (worker.ts),
 * `tea --version`, `tea doctor` and the layer check (scripts/check-layers.mjs) all read this list; nothing else in
 * src/ imports a feature's folder or reads its flag, and the layer check holds that.
 *
 * A new feature is its folder, whose `index.ts` exports what `FeatureCode` says, plus one entry here. Its `load`
 * must be written as the others are: the flag's literal in the condition itself, so that esbuild folds it and, in a
 * target with the flag off, drops the `import()` and every module only it reached. From source (no defines) every
 * feature is on. `load` is an `import()` so that a process evaluates a feature's modules only when it first needs
 * one of its actions or tasks (`tea run` of a `run:`-only agent evaluates none; bench/RESULTS.md, issue 14).
 */

import type { ActionGroup, FeatureFacts } from './actions/registry.ts'
import { sourceTargets } from './feature-targets.ts'
import type { Action } from './actions/types.ts'
import type { openNatsStore } from './aof/store/nats/store.ts'
import type { ggufReport, loadLlama } from './llama/index.ts'
import type { TaskHandler } from './pool/protocol.ts'

/** What a feature's entry module exports (each part it has). */
export interface FeatureCode {
  actions?(): readonly Action[]
  taskHandlers?: Readonly<Record<string, TaskHandler>>
  openNatsStore?: typeof openNatsStore
  /** The llama feature's: node-llama-cpp's `Llama`, the addon loaded once per process (src/llm/gguf/addon.ts). */
  loadLlama?: typeof loadLlama
  /** The llama feature's: what `tea doctor` says of a GGUF model file (src/llm/gguf/report.ts). */
  ggufReport?: typeof ggufReport
}

export interface Feature {
  name: string
  /** The action namespaces it adds (`plan` for `plan.*`). */
  actions?: readonly string[]
  /** Its actions run or list other actions by name, so loading them loads every action (registry.ts). */
  dispatches?: boolean
  /** The pool task kinds its `taskHandlers` handle, on the pool's workers. */
  tasks?: readonly string[]
  /**
   * The `run:` language it runs (its `<language>.run` action), in every build: the loader accepts the name even
   * where the build lacks the feature, and then says which builds have it.
   */
  language?: string
  /** Files it reads at run time, copied by the build beside the bundle under `<name>/` (src/sea/runtime-files.ts). */
  files?: { package: string; names: readonly string[] }
  /** The commands or flags it adds (for the reader: docs/architecture.md). */
  commands?: readonly string[]
  /** Its entry module, when this build has it. */
  load?: () => Promise<FeatureCode>
}

/*
 * What only the build and the docs read (`files`, `commands`) is written under `typeof __TEA_TARGET__ ===
 * 'undefined'`: true in the build's reading of the list and from source, false in a bundle (build.mjs defines
 * `__TEA_TARGET__`), where esbuild folds it and drops the part. The condition is written out at each use: a const
 * holding it is not inlined by esbuild here, which left the engines' file names in the core bundle.
 */
export const FEATURES: readonly Feature[] = [
  {
    // plan.*: an LLM splits a goal into a DAG of subtasks run on the pool
    name: 'planning',
    actions: ['plan'],
    dispatches: true,
    load: typeof __FEATURE_PLANNING__ === 'undefined' || __FEATURE_PLANNING__ ? () => import('./planning/index.ts') : undefined,
  },
  {
    // reason.* and reflection.loop: chain of thought, ReAct with tools, self-correction
    name: 'reasoning',
    actions: ['reason', 'reflection'],
    dispatches: true,
    load: typeof __FEATURE_REASONING__ === 'undefined' || __FEATURE_REASONING__ ? () => import('./reasoning/index.ts') : undefined,
  },
  {
    // SWI-Prolog in WebAssembly: run: in Prolog, prolog.query
    name: 'prolog',
    actions: ['prolog'],
    tasks: ['prolog'],
    language: 'prolog',
    ...(typeof __TEA_TARGET__ === 'undefined' && {
      files: { package: 'swipl-wasm/dist/swipl/swipl-web.js', names: ['swipl-web.js', 'swipl-web.wasm', 'swipl-web.data'] },
    }),
    load: typeof __FEATURE_PROLOG__ === 'undefined' || __FEATURE_PROLOG__ ? () => import('./prolog/index.ts') : undefined,
  },
  {
    // Lua 5.4 in WebAssembly: run: in Lua
    name: 'lua',
    actions: ['lua'],
    tasks: ['lua'],
    language: 'lua',
    ...(typeof __TEA_TARGET__ === 'undefined' && { files: { package: 'wasmoon/dist/glue.wasm', names: ['index.cjs', 'glue.wasm'] } }),
    load: typeof __FEATURE_LUA__ === 'undefined' || __FEATURE_LUA__ ? () => import('./lua/index.ts') : undefined,
  },
  {
    // CPython in WebAssembly (Pyodide): run: in Python
    name: 'python',
    actions: ['python', 'code'],
    tasks: ['python'],
    language: 'python',
    ...(typeof __TEA_TARGET__ === 'undefined' && {
      files: {
        package: 'pyodide/pyodide.js',
        names: ['pyodide.cjs', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'],
      },
    }),
    load: typeof __FEATURE_PYTHON__ === 'undefined' || __FEATURE_PYTHON__ ? () => import('./python/index.ts') : undefined,
  },
  {
    // The NATS JetStream task store and its client (docs/fleet.md). Its entry is the store's module; the fleet's
    // roles (worker, scheduler, router) are the AOF protocol's and run on the folder store in every build.
    name: 'fleet',
    ...(typeof __TEA_TARGET__ === 'undefined' && { commands: ['--nats on tea aof … and tea worker', 'tea aof route'] }),
    load: typeof __FEATURE_FLEET__ === 'undefined' || __FEATURE_FLEET__ ? () => import('./aof/store/nats/store.ts') : undefined,
  },
  {
    // GGUF models run in the tea process by llama.cpp: node-llama-cpp and the prebuilt CPU addon of the target's
    // arch, carried by the build in llama/ (scripts/build/llama.mjs, src/sea/llama-runtime.ts), which the GGUF
    // provider (src/llm/gguf/) loads at the first `gguf:` model. armv7's is compiled from node-llama-cpp's source
    // (scripts/build/llama-source.mjs): every @node-llama-cpp/linux-armv7l on npm carries another arch's binaries.
    name: 'llama',
    ...(typeof __TEA_TARGET__ === 'undefined' && { commands: ["model: gguf:<file> (and TEA's provider: local with model_path)"] }),
    load: typeof __FEATURE_LLAMA__ === 'undefined' || __FEATURE_LLAMA__ ? () => import('./llama/index.ts') : undefined,
  },
]

/**
 * The release targets (targets/*.json) whose builds have feature `name`, for an error that says which build to use:
 * the build writes the table into the bundle; from source it is read from the target files.
 */
export function targetsWith(name: string): readonly string[] {
  return (typeof __TEA_FEATURE_TARGETS__ === 'undefined' ? sourceTargets(FEATURES) : __TEA_FEATURE_TARGETS__)[name] ?? []
}

/** The features this build has (`tea --version` lists them). */
export function enabledFeatures(): string[] {
  return FEATURES.filter((f) => f.load).map((f) => f.name)
}

/** The feature whose actions `name` would be (`planning` for `plan.decompose`), whether this build has it or not. */
export function featureForAction(name: string): string | undefined {
  return withAction(name)?.name
}

/**
 * What the registries are told of the features (src/actions/registry.ts): the feature that would have action
 * `name` when this build lacks it, with the builds that have it (UNKNOWN_ACTION, and a `run:` in a language the
 * build lacks, name them), and the `run:` languages.
 */
export const FEATURE_FACTS: FeatureFacts = {
  lacking(name) {
    const f = withAction(name)
    return f && !f.load ? { feature: f.name, builds: targetsWith(f.name) } : undefined
  },
  /** The `run:` languages besides JavaScript, one per feature that runs one, whether this build has it or not. */
  languages: FEATURES.flatMap((f) => (f.language ? [f.language] : [])),
}

function withAction(name: string): Feature | undefined {
  return FEATURES.find((f) => f.actions?.some((p) => name.startsWith(`${p}.`)))
}

/** The features by name, for what reaches one (the fleet's store). */
export function feature(name: string): Feature | undefined {
  return FEATURES.find((f) => f.name === name)
}

/** Each feature of this build that adds actions, as a group of the registry its entry module loads on first use. */
export function featureGroups(): ActionGroup[] {
  return FEATURES.flatMap(({ actions, dispatches, load }) =>
    actions && load ? [{ prefixes: actions, ...(dispatches && { dispatches }), load: async () => (await load()).actions?.() ?? [] }] : [],
  )
}

/**
 * The pool task handlers of this build's features (src/worker.ts adds them to the core's): each loads its feature's
 * entry with its first task, so a worker that runs no Lua never evaluates the Lua feature's modules.
 */
export function featureTaskHandlers(): Record<string, TaskHandler> {
  const handlers: Record<string, TaskHandler> = {}
  for (const { tasks, load } of FEATURES) {
    if (!load) continue
    for (const kind of tasks ?? [])
      handlers[kind] = async (task, host) => {
        // A kind in `tasks` is one the entry's taskHandlers has (test/features.test.ts).
        return (await load()).taskHandlers![kind]!(task, host)
      }
  }
  return handlers
}
