/**
 * Builds (or reuses) each target's single executable and runs it as a user on that board would: directly on
 * x64, through qemu user-mode emulation with the Debian cross sysroot for ARM (scripts/build/qemu.mjs). Every
 * process started here is ended by the caller or by the `timeoutMs` safety net.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
// @ts-expect-error plain JavaScript build script without type declarations
import { seaTarget } from '../../scripts/sea.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { runnerFor } from '../../scripts/build/qemu.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { listTargets, loadTarget } from '../../scripts/build/targets.mjs'

export const ROOT = resolve(import.meta.dirname, '../..')

/** The SEA prints this when its main script `require`s anything but a built-in: a sign something slipped through. */
export const SEA_REQUIRE_WARNING = 'only supports loading built-in modules'

export interface Target {
  name: string
  arch: string
  node: string
  features: Record<string, boolean>
}

export function targets(): Target[] {
  return (listTargets(ROOT) as string[]).map((n) => loadTarget(ROOT, n) as Target)
}

/**
 * The target's executable. Under `npm test` (TEA_TEST_ARTEFACTS=built) scripts/test.mjs built it before any file
 * started, and it is only read here: rebuilding would rewrite dist/linux-x64/tea.cjs while other files run it.
 * Run alone, the file builds it (or reuses it, cached by the bundle's hash).
 */
export async function ensureSea(name: string): Promise<{ file: string; rebuilt: boolean; timings: Record<string, number> }> {
  if (process.env.TEA_TEST_ARTEFACTS !== 'built') return seaTarget(name, { quiet: true })
  const file = join(ROOT, 'dist', name, 'tea')
  if (!existsSync(file)) throw new Error(`${file} is missing: scripts/test.mjs builds it before the test files start`)
  return { file, rebuilt: false, timings: {} }
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
}

export interface RunOptions {
  env?: Record<string, string | undefined>
  cwd?: string
  timeoutMs?: number
  /** Called with each chunk of stdout and a way to SIGKILL the child: lets a test kill it at the right moment. */
  onStdout?: (text: string, kill: () => void) => void
  /** Called with each chunk of stderr and a way to send the child SIGTERM: lets a test stop a daemon cleanly. */
  onStderr?: (text: string, stop: () => void) => void
}

/**
 * A clean environment: nothing from the test runner (coverage hooks, NODE_OPTIONS, tsx) reaches tea. Coverage is
 * turned off with an empty NODE_V8_COVERAGE, not left out: child_process copies the parent's into an env without
 * the key, and the executable (under qemu too) would then write coverage c8 throws away and start without caches.
 */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...extra })) {
    if (
      v === undefined ||
      k.startsWith('NODE_') ||
      k.startsWith('TSX') ||
      k === 'TEA_DATA_DIR' ||
      k === 'TEA_LMDB_NATIVE' ||
      k === 'TEA_WORKER_FILE'
    )
      continue
    env[k] = v
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v
  env.NODE_V8_COVERAGE = ''
  return env
}

export function runExe(target: Target, exe: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const [cmd, ...prefix] = [...(runnerFor(target.arch) as string[]), exe]
  const started = Date.now()
  const child = spawn(cmd!, [...prefix, ...args], { cwd: opts.cwd ?? ROOT, env: cleanEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const kill = (): void => {
    child.kill('SIGKILL')
  }
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d
    opts.onStdout?.(stdout, kill)
  })
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d
    opts.onStderr?.(stderr, () => child.kill('SIGTERM'))
  })
  const timer = setTimeout(kill, opts.timeoutMs ?? 120_000)
  return new Promise((done, fail) => {
    child.on('error', (e) => {
      clearTimeout(timer)
      fail(e)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      done({ code, signal, stdout, stderr, ms: Date.now() - started })
    })
  })
}
