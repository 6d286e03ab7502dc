/**
 * The TEA conformance count: every agent file of The Edge Agent's own repository (../shared/tea-corpus, 198 files
 * with a manifest) through tea as a user would meet it — `tea validate` (the loader), then, for the files that
 * validate, a run against the scripted fake model server with the manifest's placeholder input. Runs happen in a
 * scratch copy of the file's folder, so `file.*` actions never write into the corpus.
 *
 * Each file is counted three ways: as it is; as a user runs a TEA Python file after reading tea's hint — with
 * `settings.run_language: python` added to files whose `run:` code is Python (TEA's Python runtime needs no
 * `language:`, tea's default is JavaScript); and stubbed — every `run:` body replaced by `return {}` and
 * `language:` removed — which sets every language aside and shows what else stops TEA's agents.
 *
 * `npx tsx test/compat/print.ts [--list]` prints the tables that docs/tea-compat.md holds;
 * test/compat/corpus.test.ts runs the same count and holds the figures as a floor.
 */

import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { loadAgentText } from '../../src/agent/load.ts'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { startRun } from '../../src/engine/lifecycle.ts'
import { lazyRegistry } from '../../src/catalog.ts'
import type { Registry } from '../../src/actions/registry.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { parseDocument } from 'yaml'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { tinyGguf } from '../support/tiny-gguf.ts'
import { tempDir } from '../support/temp-dir.ts'

/** TEA's agent files beside this repository (../shared/tea-corpus), or where TEA_CORPUS says. */
export const CORPUS = process.env.TEA_CORPUS ?? resolve(import.meta.dirname, '../../../shared/tea-corpus')

export interface ManifestEntry {
  file: string
  kind: 'example' | 'fixture'
  languages: string[]
  group: 'python' | 'prolog' | 'lua' | 'none_or_js'
  tea_loadable: boolean
  input: Record<string, unknown>
}

export type Outcome =
  /** TEA's own loader cannot read it either (not valid YAML, two documents). */
  'tea-unloadable' | 'invalid' | 'run-completed' | 'run-interrupted' | 'run-failed'

export interface FileResult {
  file: string
  group: ManifestEntry['group']
  outcome: Outcome
  /** The first problem's or the run error's code, for the blocker ranking. */
  code?: string
  message?: string
}

export function manifest(): ManifestEntry[] {
  return (JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as { files: ManifestEntry[] }).files
}

/**
 * Counts every file (or the first `limit`, of those `only` keeps), as it is or `stubbed`. Each run gets
 * `runTimeoutMs`; a run still going then counts as failed (COUNT_TIMEOUT).
 */
export type CountMode = 'as-written' | 'python-default' | 'stubbed'

/**
 * How long one run may take: well past tea's own limit for `run:` code (settings.run_timeout, 10 s), so a file
 * whose code never ends (TEA's `error-timeout` fixture) meets tea's NODE_TIMEOUT, not the count's.
 */
const RUN_LIMIT_MS = 20_000

export async function countCorpus(
  options: { limit?: number; runTimeoutMs?: number; mode?: CountMode; only?: (file: string) => boolean } = {},
): Promise<FileResult[]> {
  const server = await startFakeModelServer()
  // Every model call answers `ok`; one that asks for JSON (format, response_format) gets `{"answer": "ok"}`.
  server.fallback({ content: (req) => (req.body?.format || req.body?.response_format ? '{"answer": "ok"}' : 'ok') })
  // Loaded whole here, as the CLI's registry would load every group an agent names (print.ts runs as ESM).
  const registry = lazyRegistry()
  await registry.load()
  const results: FileResult[] = []
  const bin = fakeModelCommands()
  try {
    for (const entry of manifest()
      .filter((e) => options.only?.(e.file) ?? true)
      .slice(0, options.limit)) {
      results.push(await countFile(entry, registry, server.url, bin, options.runTimeoutMs ?? RUN_LIMIT_MS, options.mode ?? 'as-written'))
    }
  } finally {
    await server.close()
    rmSync(bin, { recursive: true, force: true })
  }
  return results
}

/**
 * The command-line models TEA's examples run as shell providers (`claude`, `codex`, `gemini`, and a board's
 * `llama-cli`), as stand-ins that read the prompt and answer `ok` like the fake server: a folder put first on the
 * runs' PATH.
 */
function fakeModelCommands(): string {
  const bin = tempDir('tea-corpus-bin-')
  for (const name of ['claude', 'codex', 'gemini', 'llama-cli']) {
    writeFileSync(join(bin, name), '#!/bin/sh\ncat > /dev/null\necho ok\n', { mode: 0o755 })
  }
  return bin
}

/** The agent with every `run:` body replaced by `return {}` and every `language:` removed; otherwise as written. */
export function stub(text: string): string {
  const doc = parseDocument(text)
  stubNodes(doc.get('nodes', true))
  return doc.toString()
}

/** The agent with `settings.run_language: python` (unless it names a default already). */
export function pythonDefault(text: string): string {
  const doc = parseDocument(text)
  if (!doc.hasIn(['settings', 'run_language'])) {
    if (doc.get('settings') === undefined || doc.get('settings') === null) doc.set('settings', doc.createNode({}))
    doc.setIn(['settings', 'run_language'], 'python')
  }
  return doc.toString()
}

interface YamlMap {
  has(k: string): boolean
  get(k: string, keep: true): unknown
  set(k: string, v: unknown): void
  delete(k: string): void
}

/** Stubs each node's run: (and the run: of its steps:, a dynamic_parallel's steps, a while_loop's body). */
function stubNodes(list: unknown): void {
  if (!list || typeof list !== 'object' || !('items' in list) || !Array.isArray(list.items)) return
  for (const node of list.items as YamlMap[]) {
    if (typeof node?.has !== 'function') continue
    if (node.has('run')) node.set('run', 'return {}')
    node.delete('language')
    for (const nested of ['steps', 'body']) if (node.has(nested)) stubNodes(node.get(nested, true))
  }
}

/**
 * What the user of an OpenAI agent has in the environment: its key (TEA's planning examples write
 * `api_key: ${OPENAI_API_KEY}`, which tea requires to be set). A placeholder: every call goes to the fake server.
 */
const USER_ENV = { ...process.env, OPENAI_API_KEY: process.env.OPENAI_API_KEY ?? 'sk-corpus-placeholder' }

async function countFile(
  entry: ManifestEntry,
  registry: Registry,
  url: string,
  bin: string,
  runTimeoutMs: number,
  mode: CountMode,
): Promise<FileResult> {
  const base = { file: entry.file, group: entry.group }
  if (!entry.tea_loadable) return { ...base, outcome: 'tea-unloadable' }
  const original = join(CORPUS, entry.file)
  const scratch = tempDir('tea-corpus-')
  try {
    // The file's own folder, copied: agents read files beside them (prompts, data) and some write.
    cpSync(dirname(original), scratch, { recursive: true, filter: (src) => !src.includes('node_modules') })
    const path = join(scratch, basename(original))
    if (!existsSync(path)) return { ...base, outcome: 'invalid', message: 'copy failed' }
    if (mode === 'stubbed') writeFileSync(path, stub(readFileSync(path, 'utf8')))
    if (mode === 'python-default' && pythonInside(entry, path, registry)) writeFileSync(path, pythonDefault(readFileSync(path, 'utf8')))
    let loaded: ReturnType<typeof loadAgentText>
    try {
      loaded = loadAgentText(readFileSync(path, 'utf8'), path, registry, { env: USER_ENV })
    } catch (e) {
      return { ...base, outcome: 'invalid', code: isTeaError(e) ? e.code : 'UNCODED', message: errorMessage(e) }
    }
    if (!loaded.spec) return { ...base, outcome: 'invalid', code: loaded.problems[0]?.code, message: loaded.problems[0]?.message }
    const signal = AbortSignal.timeout(runTimeoutMs)
    // Both kinds of model server are the fake one: TEA's OpenAI agents name their key as ${OPENAI_API_KEY}. TEA's
    // in-process model (backend: local, provider: local) is the tiny GGUF model the tests use, where a board would
    // have its own file in TEA_MODEL_PATH (TEA's variable for it).
    const env = {
      ...USER_ENV,
      OLLAMA_HOST: url,
      OPENAI_BASE_URL: url,
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      TEA_MODEL_PATH: tinyGguf(),
    }
    const llm = createLlmClient({ env, defaults: loaded.spec.settings.llm })
    try {
      const r = await startRun(loaded.spec, { store: createMemoryStore(), registry, llm, signal }, { runId: 'corpus', input: entry.input })
      if (r.status === 'completed') return { ...base, outcome: 'run-completed' }
      if (r.status === 'interrupted') return { ...base, outcome: 'run-interrupted' }
      if (signal.aborted)
        return {
          ...base,
          outcome: 'run-failed',
          code: 'COUNT_TIMEOUT',
          message: `still running after the count's ${runTimeoutMs / 1000} s`,
        }
      return { ...base, outcome: 'run-failed', code: r.error?.code, message: r.error ? errorMessage(r.error) : r.status }
    } catch (e) {
      return { ...base, outcome: 'run-failed', code: isTeaError(e) ? e.code : 'UNCODED', message: errorMessage(e) }
    } finally {
      await llm.close()
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * Whether a user would add `settings.run_language: python`: the manifest found Python in the file, or tea chose
 * Python for some of its `run:` code (agent/run-language.ts; the manifest counts one file with Prolog nodes as
 * Prolog only).
 */
function pythonInside(entry: ManifestEntry, path: string, registry: Registry): boolean {
  if (entry.languages.includes('python')) return true
  try {
    const { spec } = loadAgentText(readFileSync(path, 'utf8'), path, registry, { env: USER_ENV })
    return spec?.runLanguages?.some((c) => c.language === 'python') === true
  } catch {
    return false
  }
}

/** Outcome counts per language group, and the blockers ranked by how many files they stop. */
export function summarize(results: FileResult[]): { table: string; counts: Record<Outcome, number> } {
  const outcomes: Outcome[] = ['tea-unloadable', 'invalid', 'run-failed', 'run-interrupted', 'run-completed']
  const groups = ['none_or_js', 'lua', 'prolog', 'python'] as const
  const counts = Object.fromEntries(outcomes.map((o) => [o, results.filter((r) => r.outcome === o).length])) as Record<Outcome, number>
  const rows = groups.map((g) => {
    const inGroup = results.filter((r) => r.group === g)
    return `| ${g} | ${inGroup.length} | ${outcomes.map((o) => inGroup.filter((r) => r.outcome === o).length).join(' | ')} |`
  })
  const blockers = new Map<string, number>()
  for (const r of results) if (r.code) blockers.set(r.code, (blockers.get(r.code) ?? 0) + 1)
  const ranked = [...blockers].sort((a, b) => b[1] - a[1]).map(([code, n]) => `| ${code} | ${n} |`)
  const table = [
    `| language group | files | ${outcomes.join(' | ')} |`,
    `|---|---|${outcomes.map(() => '---').join('|')}|`,
    ...rows,
    `| **all** | ${results.length} | ${outcomes.map((o) => `**${counts[o]}**`).join(' | ')} |`,
    '',
    '| first blocker (code) | files |',
    '|---|---|',
    ...ranked,
  ].join('\n')
  return { table, counts }
}

/** Why the count cannot run here, or false: the corpus sits beside the repository (or where TEA_CORPUS says). */
export const absent =
  !existsSync(join(CORPUS, 'manifest.json')) &&
  `the TEA corpus is not at ${CORPUS} (it sits beside the repository as ../shared/tea-corpus; or set TEA_CORPUS)`

/**
 * Counts the corpus one way and holds it to its floors: at least `floor.validate` files validate and `floor.ran`
 * run (complete or pause), none meets an uncoded error, and a TEA feature tea lacks never stops validation (a run
 * stops at the node that needs it, naming the feature).
 */
export async function checkCount(mode: CountMode, floor: { validate: number; ran: number }): Promise<FileResult[]> {
  const results = await countCorpus({ mode })
  const { counts, table } = summarize(results)
  const validated = results.length - counts['tea-unloadable'] - counts.invalid
  const ran = counts['run-completed'] + counts['run-interrupted']
  assert.ok(validated >= floor.validate, `${validated} validate, floor ${floor.validate}\n${table}`)
  assert.ok(ran >= floor.ran, `${ran} run, floor ${floor.ran}\n${table}`)
  assert.equal(
    results.filter((r) => r.code === 'UNCODED' || r.code === 'INTERNAL').map((r) => `${r.file}: ${r.message}`),
    [],
  )
  assert.equal(
    results.filter((r) => r.outcome === 'invalid' && r.code === 'TEA_UNSUPPORTED').map((r) => r.file),
    [],
  )
  for (const r of results.filter((r) => r.code === 'TEA_UNSUPPORTED')) assert.match(String(r.message), /^node '[^']+'.* is a TEA feature/)
  return results
}
