/**
 * The per-user cache directory where a single executable writes what it carries but cannot use in place: lmdb's
 * native addon (the dynamic loader needs a file) and the bundle that worker threads load (materialise.ts), and
 * where the bundle keeps its code cache (loader.ts). The directory must allow exec: `dlopen` of a file on a
 * `noexec` mount fails with "failed to map segment from shared object". This module imports nothing heavy: the
 * bundle's loader uses it before anything else has loaded.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { builtin } from '../core/builtin.ts'

export const CACHE_HINT = 'set TEA_CACHE_DIR to a writable directory on a filesystem that allows exec (not mounted noexec)'

/** `$TEA_CACHE_DIR`, else `$XDG_CACHE_HOME/tea`, else `~/.cache/tea`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEA_CACHE_DIR) return resolve(env.TEA_CACHE_DIR)
  if (env.XDG_CACHE_HOME) return resolve(env.XDG_CACHE_HOME, 'tea')
  return join(env.HOME || builtin('node:os').homedir(), '.cache', 'tea')
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
