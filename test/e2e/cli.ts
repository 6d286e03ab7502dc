/**
 * Drives the built bundle as a user would: `node dist/linux-x64/tea.cjs …` in a child process, with its own
 * data dir and environment. `npm test` builds the bundle before the suites run.
 */

import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { tempDir } from '../support/temp-dir.ts'

export const ROOT = resolve(import.meta.dirname, '../..')
export const BUNDLE = join(ROOT, 'dist/linux-x64/tea.cjs')

export interface Result {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface TeaOptions {
  cwd?: string
  env?: Record<string, string | undefined>
  stdin?: string
  /** Kill the process with SIGKILL after this many ms (a safety net; tests end their processes). */
  timeoutMs?: number
}

export function requireBundle(): void {
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'node build.mjs --target linux-x64' (npm test does)`)
}

/**
 * The environment the built bundle runs with here: the test's own, with no data dir, a model server that is not
 * there, no coverage, and then `extra` (a key set to undefined is left out). Coverage is left out because c8
 * counts src/ alone: a process running dist/ would write ~0.7 MB of coverage for c8 to throw away, and would
 * start without its code cache (src/sea/code-cache.ts turns it off under coverage), as no user's tea does.
 */
export function bundleEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  // Empty, not absent: child_process copies the parent's NODE_V8_COVERAGE into an env that lacks the key.
  const all = { ...process.env, TEA_DATA_DIR: undefined, OLLAMA_HOST: 'http://127.0.0.1:9', NODE_V8_COVERAGE: '', ...extra }
  for (const [k, v] of Object.entries(all)) if (v !== undefined) env[k] = v
  return env
}

export function spawnTea(args: string[], options: TeaOptions = {}): ChildProcess {
  requireBundle()
  return spawn(process.execPath, [BUNDLE, ...args], {
    cwd: options.cwd ?? ROOT,
    env: bundleEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
}

export function tea(args: string[], options: TeaOptions = {}): Promise<Result> {
  const child = spawnTea(args, options)
  return collect(child, options)
}

export function collect(child: ChildProcess, options: TeaOptions = {}): Promise<Result> {
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => (stdout += d))
  child.stderr!.on('data', (d) => (stderr += d))
  // A child that has already exited (killed before its output was collected) closes its stdin: not an error here.
  child.stdin!.on('error', () => {})
  child.stdin!.end(options.stdin ?? '')
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000)
  return new Promise((done) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      done({ code, signal, stdout, stderr })
    }),
  )
}

/** Why a small tmpfs cannot be mounted here (the full-disk tests fill one), or false when it can. */
export function cannotMountTmpfs(): string | false {
  const s = scratch()
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', s.dir], { stdio: 'ignore' })
    execFileSync('umount', [s.dir], { stdio: 'ignore' })
    return false
  } catch {
    return 'cannot mount a tmpfs here (needs root): the full-disk test needs a small filesystem to fill'
  } finally {
    s.cleanup()
  }
}

/** A scratch folder with the given files; removed by `cleanup`. */
export function scratch(files: Record<string, string> = {}): { dir: string; path(name: string): string; cleanup(): void } {
  const dir = tempDir('tea-e2e-')
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return { dir, path: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Runs tea with `--stream` and SIGKILLs it at the first event `when` accepts (e.g. the `node_end` of a node: its
 * record has committed). Resolves with the result and every event seen; the caller checks it was killed.
 */
export async function killWhen(
  args: string[],
  when: (event: Record<string, unknown>) => boolean,
  options: TeaOptions = {},
): Promise<Result & { events: Array<Record<string, unknown>> }> {
  const child = spawnTea([...args, '--stream'], options)
  const events: Array<Record<string, unknown>> = []
  let buffer = ''
  child.stdout!.on('data', (d) => {
    buffer += d
    const lines = buffer.split('\n')
    buffer = lines.pop()!
    for (const line of lines) {
      if (!line.trim()) continue
      const event = JSON.parse(line) as Record<string, unknown>
      events.push(event)
      if (when(event)) child.kill('SIGKILL')
    }
  })
  return { ...(await collect(child, options)), events }
}

/** `killWhen` at the `node_end` of `node`. */
export const afterNode =
  (node: string) =>
  (e: Record<string, unknown>): boolean =>
    e.type === 'node_end' && e.node === node
