/**
 * The checks of `tea doctor`, each answering one question a board owner asks when tea "does not work", with the
 * fix when the answer is no. A check never throws: whatever goes wrong is its ✗.
 */

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { AgentSpec } from '../../agent/types.ts'
import { enabledFeatures, featureForAction } from '../../feature-list.ts'
import { errorMessage, isTeaError } from '../../core/errors.ts'
import { httpFetch } from '../../core/http.ts'
import { resolveModel } from '../../llm/model-spec.ts'
import { cacheDir, mountOptions } from '../../sea/cache-dir.ts'
import { memAvailable } from '../serve/run-manager.ts'

export interface CheckResult {
  name: string
  ok: boolean
  /** What was found. */
  detail: string
  /** What to do when it failed. */
  fix?: string
}

const mb = (n: number) => `${Math.round(n / 2 ** 20)} MB`

export interface ModelServer {
  url: string
  version?: string
  /** Pulled models with their sizes in bytes; undefined when the server could not be asked. */
  models?: Map<string, number>
  error?: string
}

/** Asks Ollama for its version and its pulled models (3 s each). */
export async function askModelServer(url: string): Promise<ModelServer> {
  const get = async (path: string): Promise<any> => {
    const res = await httpFetch(`${url}${path}`, { signal: AbortSignal.timeout(3000) })
    if (!res.ok) throw new Error(`${path} answered HTTP ${res.status}`)
    return res.json()
  }
  try {
    const version = (await get('/api/version')) as { version?: string }
    const tags = (await get('/api/tags')) as { models?: Array<{ name: string; size?: number }> }
    const models = new Map((tags.models ?? []).map((m) => [m.name, m.size ?? 0] as const))
    return { url, version: version.version ?? 'unknown', models }
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause
    return { url, error: cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e)) }
  }
}

export function modelServerCheck(server: ModelServer): CheckResult {
  if (server.error)
    return {
      name: 'model server',
      ok: false,
      detail: `no answer from ${server.url} (${server.error})`,
      fix: 'start it (sudo systemctl start ollama), or point OLLAMA_HOST at it',
    }
  return { name: 'model server', ok: true, detail: `Ollama ${server.version} at ${server.url}, ${server.models?.size ?? 0} models pulled` }
}

/** The Ollama models an agent names: its settings' default and every node's literal `model:`. */
export function ollamaModels(spec: AgentSpec, env: NodeJS.ProcessEnv): string[] {
  const { llm } = spec.settings
  const named = [llm.model, ...spec.nodes.map((n) => n.with?.model)]
  const found = new Set<string>()
  for (const model of named) {
    if (typeof model !== 'string' || model.includes('{{')) continue
    try {
      const spec_ = resolveModel(model, llm.provider, env, llm.shell_provider)
      if (spec_.provider === 'ollama') found.add(spec_.model)
    } catch {} // a bad model string is the agent check's to report
  }
  return [...found]
}

/** Ollama's names: `qwen2.5:1.5b`, and `phi4` meaning `phi4:latest`. */
function pulledSize(models: Map<string, number>, name: string): number | undefined {
  return models.get(name) ?? (name.includes(':') ? undefined : models.get(`${name}:latest`))
}

export function modelsPulledCheck(server: ModelServer, wanted: string[]): CheckResult {
  if (!server.models)
    return { name: 'models pulled', ok: false, detail: 'the model server did not answer', fix: 'fix the model server first' }
  const missing = wanted.filter((m) => pulledSize(server.models!, m) === undefined)
  if (missing.length)
    return {
      name: 'models pulled',
      ok: false,
      detail: `not pulled: ${missing.join(', ')}`,
      fix: missing.map((m) => `ollama pull ${m}`).join(' && '),
    }
  return { name: 'models pulled', ok: true, detail: wanted.length ? wanted.join(', ') : 'no agent names an Ollama model' }
}

/** Memory available against the largest model the agents name (Ollama needs about its file size in RAM). */
export function memoryCheck(server: ModelServer, wanted: string[], available = memAvailable()): CheckResult {
  const sizes = wanted.map((m) => [m, server.models ? (pulledSize(server.models, m) ?? 0) : 0] as const)
  const [largest, size] = sizes.reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0] as readonly [string, number])
  if (!size) return { name: 'memory', ok: true, detail: `${mb(available)} available` }
  const ok = available >= size * 1.2
  return {
    name: 'memory',
    ok,
    detail: `${mb(available)} available; ${largest} needs about ${mb(size * 1.2)}`,
    ...(!ok && { fix: `use a smaller model (e.g. a q4 quantisation), stop other programs, or add swap/zram` }),
  }
}

/** The data dir can be written, and sits on a filesystem where fsync makes a checkpoint survive a power cut. */
export function dataDirCheck(dataDir: string): CheckResult {
  const name = 'data dir'
  // A data dir not made yet is made for the probe and removed again: doctor leaves nothing behind.
  const made = !existsSync(dataDir)
  try {
    mkdirSync(dataDir, { recursive: true })
    const probe = join(dataDir, `.doctor-${process.pid}`)
    const fd = openSync(probe, 'w')
    try {
      writeSync(fd, 'x')
      fsyncSync(fd)
    } finally {
      closeSync(fd)
      rmSync(probe, { force: true })
    }
  } catch (e) {
    if (made) rmSync(dataDir, { recursive: true, force: true })
    return {
      name,
      ok: false,
      detail: `${dataDir} cannot be written (${(e as NodeJS.ErrnoException).code ?? e})`,
      fix: 'give --data-dir a writable folder, or chown it to the user tea runs as',
    }
  }
  const mount = mountOptions(dataDir)
  if (made) rmSync(dataDir, { recursive: true, force: true })
  const type = mount ? fsType(mount.mountPoint) : undefined
  if (type === 'tmpfs' || type === 'ramfs')
    return {
      name,
      ok: false,
      detail: `${dataDir} is on ${type} (in RAM): runs are lost at a power cut`,
      fix: 'put the data dir on the SD card or disk (--data-dir, TEA_DATA_DIR)',
    }
  if (mount?.options.includes('nobarrier'))
    return {
      name,
      ok: false,
      detail: `${mount.mountPoint} is mounted nobarrier: fsync does not reach the card`,
      fix: `remount ${mount.mountPoint} without nobarrier`,
    }
  return { name, ok: true, detail: `${dataDir} is writable and fsync works${type ? ` (${type})` : ''}` }
}

function fsType(mountPoint: string): string | undefined {
  try {
    return readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .reverse()
      .find((f) => f[1] === mountPoint)?.[2]
  } catch {
    return undefined
  }
}

/** The cache dir allows exec: lmdb's native addon is loaded from there (sea/cache-dir.ts). */
export function cacheDirCheck(env: NodeJS.ProcessEnv): CheckResult {
  const dir = cacheDir(env)
  const mount = mountOptions(dir)
  if (mount?.options.includes('noexec'))
    return {
      name: 'cache dir',
      ok: false,
      detail: `${dir} is on ${mount.mountPoint}, mounted noexec`,
      fix: 'set TEA_CACHE_DIR to a folder on a filesystem without noexec',
    }
  return { name: 'cache dir', ok: true, detail: `${dir} allows exec` }
}

/** glibc 2.34 or newer: the executables' Node and lmdb's addon need it (docs/deploy.md). */
/** `version` null: not glibc. */
export function glibcCheck(version: string | null = glibcVersion() ?? null): CheckResult {
  if (!version)
    return { name: 'glibc', ok: false, detail: 'not glibc (musl?)', fix: 'use a glibc distribution (Raspberry Pi OS, Debian, Ubuntu)' }
  const [major = 0, minor = 0] = version.split('.').map(Number)
  const ok = major > 2 || (major === 2 && minor >= 34)
  return {
    name: 'glibc',
    ok,
    detail: `glibc ${version}`,
    ...(!ok && { fix: 'upgrade to Raspberry Pi OS bookworm / Debian 12 or newer (glibc >= 2.34)' }),
  }
}

function glibcVersion(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
  return header?.glibcVersionRuntime
}

/**
 * The clock is sane: a board without a real-time clock boots in 1970 (or at its last shutdown) until NTP answers,
 * and schedules then fire at the wrong times. Not before 2025, and not before the newest write in the data dir.
 */
export function clockCheck(dataDir: string, now = Date.now()): CheckResult {
  let newest = 0
  try {
    newest = statSync(join(dataDir, 'tea.lmdb')).mtimeMs
  } catch {}
  const fix = 'enable time sync (sudo timedatectl set-ntp true) and wait for it before tea serve starts (After=time-sync.target)'
  if (now < Date.UTC(2025, 0, 1)) return { name: 'clock', ok: false, detail: `the clock says ${new Date(now).toISOString()}`, fix }
  if (now + 60_000 < newest)
    return {
      name: 'clock',
      ok: false,
      detail: `the clock (${new Date(now).toISOString()}) is behind the data dir's last write (${new Date(newest).toISOString()})`,
      fix,
    }
  return { name: 'clock', ok: true, detail: new Date(now).toISOString() }
}

/** Each agent loads, and this build has the features it uses. */
export function agentCheck(
  file: string,
  load: () => AgentSpec,
  features: readonly string[] = enabledFeatures(),
): { check: CheckResult; spec?: AgentSpec } {
  const name = `agent ${file}`
  let spec: AgentSpec
  try {
    spec = load()
  } catch (e) {
    return {
      check: {
        name,
        ok: false,
        detail: (isTeaError(e) ? `${e.code}: ${errorMessage(e)}` : String(e)).replace(/\n\s*/g, '; '),
        fix: `tea validate ${file} lists every problem`,
      },
    }
  }
  const needs = new Set<string>()
  // `run:` in Lua, Prolog or Python is lowered onto those features' actions, so the actions tell it all.
  for (const node of spec.nodes) {
    const f = node.uses ? featureForAction(node.uses) : undefined
    if (f) needs.add(f)
  }
  const lacking = [...needs].filter((f) => !features.includes(f))
  if (lacking.length)
    return {
      spec,
      check: {
        name,
        ok: false,
        detail: `uses ${lacking.join(', ')}, which this build lacks`,
        fix: "use a tea build with those features (tea --version lists a build's features)",
      },
    }
  return { spec, check: { name, ok: true, detail: `${spec.nodes.length} nodes${needs.size ? `; uses ${[...needs].join(', ')}` : ''}` } }
}
