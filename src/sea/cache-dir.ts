/**
 * The per-user cache directory where a single executable writes what it carries but cannot use in place: lmdb's
 * native addon (the dynamic loader needs a file) and the bundle that worker threads load. Files are content-
 * addressed (`<kind>/<sha256 prefix>/<name>`), written once through a temp file + rename so that concurrent first
 * starts are safe, and reused afterwards. The directory must allow exec: `dlopen` of a file on a `noexec` mount
 * fails with "failed to map segment from shared object".
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { TeaError } from '../core/errors.ts'

export const CACHE_HINT = 'set TEA_CACHE_DIR to a writable directory on a filesystem that allows exec (not mounted noexec)'

/** `$TEA_CACHE_DIR`, else `$XDG_CACHE_HOME/tea`, else `~/.cache/tea`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEA_CACHE_DIR) return resolve(env.TEA_CACHE_DIR)
  if (env.XDG_CACHE_HOME) return resolve(env.XDG_CACHE_HOME, 'tea')
  return join(env.HOME || homedir(), '.cache', 'tea')
}

/**
 * Writes `bytes` to `<cache>/<kind>/<hash>/<name>` unless an identical-size file is already there; returns the path.
 * `hash` defaults to the bytes' own; files that must sit in one folder (an engine that finds its files beside each
 * other) share one given by the caller.
 */
export function materialise(kind: string, name: string, bytes: Uint8Array, root: string = cacheDir(), hash?: string): string {
  hash ??= createHash('sha256').update(bytes).digest('hex').slice(0, 16)
  const file = join(root, kind, hash, name)
  try {
    if (statSync(file).size === bytes.byteLength) return file
  } catch {
    // not there yet
  }
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(tmp, bytes, { mode: 0o755 })
    renameSync(tmp, file)
  } catch (e) {
    try {
      unlinkSync(tmp)
    } catch {
      // nothing to clean up
    }
    throw new TeaError('CACHE_DIR_UNUSABLE', `cannot write ${name} into the cache directory ${root}: ${(e as Error).message}`, {
      cause: e,
      hint: CACHE_HINT,
    })
  }
  return file
}

/** The mount options of the filesystem holding `path`, from /proc/self/mounts (Linux); undefined when unknown. */
export function mountOptions(path: string, mounts?: string): { mountPoint: string; options: string[] } | undefined {
  let text = mounts
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/mounts', 'utf8')
    } catch {
      return undefined
    }
  }
  let best: { mountPoint: string; options: string[] } | undefined
  for (const line of text.split('\n')) {
    const fields = line.split(' ')
    if (fields.length < 4) continue
    // /proc/self/mounts escapes space, tab, newline and backslash as octal.
    const mountPoint = fields[1]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))
    const inside = path === mountPoint || path.startsWith(mountPoint.endsWith('/') ? mountPoint : `${mountPoint}/`)
    if (inside && (!best || mountPoint.length >= best.mountPoint.length)) best = { mountPoint, options: fields[3]!.split(',') }
  }
  return best
}

/** True when `path` sits on a filesystem mounted `noexec`. */
export function isNoexec(path: string, mounts?: string): boolean {
  return mountOptions(path, mounts)?.options.includes('noexec') ?? false
}
