/**
 * Opening a path beneath the workspace with no window between the check and the use (issue 9, probe defect D4).
 *
 * Checking a path and opening it afterwards lets another process swap a folder for a symlink in between. Linux's
 * cure, openat2() with RESOLVE_BENEATH, is out of reach: Node has no openat at all. But the kernel resolves
 * `/proc/self/fd/N/name` by jumping to the very folder that descriptor N holds (a "magic link", not a path name
 * looked up again), so opening that path is openat(N, name). The walk below starts from a descriptor of the
 * workspace and opens one name at a time with O_NOFOLLOW, holding each folder open while it looks up the next name
 * in it: the kernel never follows a symlink for us, and renaming or swapping names behind the walk cannot redirect
 * it. A symlink met on the way is read and followed by hand, restarting from the workspace, and only while its
 * target stays inside (as text: `..` in a target is applied to the path walked so far, and an absolute target must
 * name the workspace's real path or its configured path).
 *
 * What the walk cannot see is a folder it holds being moved out of the workspace. So the actions verify what they
 * opened before they read or write a byte, and verify a folder before they create anything in it: the path of the
 * descriptor (readlink of /proc/self/fd/N, which the kernel computes from the open file, not from our path) must
 * lie inside the workspace's real path. The actions also refuse regular files with more than one name: a hard
 * link's other name may lie outside (D5).
 *
 * Without /proc none of this works, and every file.* action fails closed with FILE_ERROR rather than fall back to
 * the path check that the race defeats. /proc is mounted on every system tea targets (SPEC §1: Linux boards).
 *
 * The walk uses raw descriptors and synchronous calls on purpose: it is a handful of metadata lookups that the
 * kernel answers from its cache in microseconds, where each promise-based call would cost a thread-pool round trip
 * (~50 µs here, more on a Pi). Reading and writing file contents, which can wait on the card, stay asynchronous.
 */

import { closeSync, constants, mkdirSync, openSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import { TeaError } from '../../core/errors.ts'
import { isInside, namesBelow, outsideWorkspace, workspaceNames } from './workspace-path.ts'

/** Linux gives up after 40 symlinks in one lookup; so do we. */
const MAX_LINKS = 40
/** How often one name is looked up again after it changed under us (or after creating it). */
const RETRIES = 3

/** A folder on the way: opened as a folder, never through a symlink. */
export const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/** Where a target sits once the walk has reached its folder. */
export interface Spot {
  /** Descriptor of the folder holding the target; the walk closes it. */
  dir: number
  /** The target's name in `dir`; undefined when the target is the workspace itself (then `dir` is the workspace). */
  name: string | undefined
  /** The target relative to the workspace, `/`-separated, symlinks resolved; `.` for the workspace. */
  relative: string
}

/**
 * Called with the target's folder. It opens (or stats) the name without following a symlink, and throws an error
 * with code ELOOP when the name is a symlink (O_NOFOLLOW does; ENOTDIR from O_DIRECTORY counts too): the walk
 * then follows the link and calls it again. It must not have written anything before it throws so.
 */
export type UseSpot<T> = (spot: Spot, workspace: Workspace) => Promise<T>

export interface LocateOptions {
  /** Create missing folders on the way (and the workspace itself). */
  mkdir?: boolean
}

/** Checks `given` as text, opens the workspace, walks to the target and hands it to `use`; closes everything. */
export async function locateInWorkspace<T>(
  action: string,
  workspace: string,
  given: string,
  options: LocateOptions,
  use: UseSpot<T>,
): Promise<T> {
  if (!path.isAbsolute(workspace)) {
    throw new TeaError('FILE_ERROR', `${action}: the workspace must be an absolute path, got '${workspace}'`)
  }
  workspaceNames(action, workspace, given) // refuse `..`, absolute paths and NUL before touching anything
  const ws = Workspace.open(action, workspace, given, options.mkdir ?? false)
  try {
    return await ws.locate(given, options, use)
  } finally {
    ws.close()
  }
}

/** `/proc/self/fd/N/name`: `name` looked up in the folder descriptor N holds, wherever that folder is now. */
export function inFolder(dir: number, name: string): string {
  return `/proc/self/fd/${dir}/${name}`
}

/** The magic link naming an open descriptor's file; readlink gives its path as the kernel sees it now. */
export function descriptorPath(fd: number): string {
  return `/proc/self/fd/${fd}`
}

/** An errno-style error, for the walk's own conditions (the symlink signal, a loop). */
export function errnoError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

export class Workspace {
  private constructor(
    private readonly action: string,
    /** The workspace as configured (absolute). */
    private readonly configured: string,
    private readonly root: number,
    /** The workspace's real path, as the kernel names the open root. */
    readonly real: string,
  ) {}

  static open(action: string, workspace: string, given: string, create: boolean): Workspace {
    const configured = path.resolve(workspace)
    // The workspace itself is configuration, trusted: a symlink to it is followed.
    let root: number
    try {
      root = openSync(configured, constants.O_RDONLY | constants.O_DIRECTORY)
    } catch (e) {
      if (!create || errno(e) !== 'ENOENT') throw workspaceError(action, workspace, e)
      try {
        mkdirSync(configured, { recursive: true })
        root = openSync(configured, constants.O_RDONLY | constants.O_DIRECTORY)
      } catch (err) {
        throw workspaceError(action, workspace, err)
      }
    }
    let real: string
    try {
      real = readlinkSync(descriptorPath(root))
    } catch (e) {
      closeSync(root)
      throw new TeaError(
        'FILE_ERROR',
        `${action}: cannot keep '${given}' inside the workspace ${workspace}: file actions open paths through ` +
          `/proc/self/fd and /proc is not mounted (${errno(e) ?? String(e)}); they refuse to work without it`,
        { cause: e, details: { path: given, workspace }, hint: 'mount procfs: mount -t proc proc /proc' },
      )
    }
    return new Workspace(action, configured, root, real)
  }

  close(): void {
    closeSync(this.root)
  }

  /** Walks to `given` (relative to the workspace) and calls `use` with its folder; see `UseSpot`. */
  async locate<T>(given: string, options: LocateOptions, use: UseSpot<T>): Promise<T> {
    let names = workspaceNames(this.action, this.configured, given)
    for (let links = 0; ; links++) {
      if (links > MAX_LINKS) throw errnoError('ELOOP', `too many symbolic links resolving ${given}`)
      const held: number[] = []
      try {
        let dir = this.root
        const walked: string[] = []
        let detour: string[] | undefined
        for (let i = 0; i < names.length - 1 && detour === undefined; i++) {
          const name = names[i]!
          const entered = this.enter(dir, name, options.mkdir ?? false, given)
          if (typeof entered !== 'number') detour = this.follow(given, walked, entered.link, names.slice(i + 1))
          else {
            held.push(entered)
            dir = entered
            walked.push(name)
          }
        }
        if (detour === undefined) {
          const last = await this.useLast(dir, walked, names.at(-1), given, use)
          if (!Array.isArray(last)) return last.value
          detour = last
        }
        names = detour
      } finally {
        for (const fd of held) closeSync(fd)
      }
    }
  }

  /**
   * Refuses descriptor `fd` unless the kernel places its file inside the workspace now. Catches a folder moved out
   * of the workspace while the walk held it. (A file deleted meanwhile reads as `… (deleted)`, still inside.)
   */
  verify(fd: number, given: string): void {
    if (fd === this.root) return
    const now = readlinkSync(descriptorPath(fd))
    if (!isInside(this.real, now)) {
      throw outsideWorkspace(this.action, this.configured, given, `was moved out of the workspace (to ${now}) while being opened`)
    }
  }

  /** Refuses a regular file with more than one name: another name may be outside the workspace (D5). */
  refuseHardLink(links: number, given: string): void {
    if (links <= 1) return
    const why =
      `is a hard link (one file with ${links} names); its other names may lie outside the workspace, so file.read ` +
      'and appends refuse it'
    throw outsideWorkspace(this.action, this.configured, given, why, {
      details: { links },
      hint: 'a file.write without append replaces the name with a file of its own and leaves the other names alone',
    })
  }

  /** Opens the folder `name` in `dir` (creating it if asked), or returns the symlink found there instead. */
  private enter(dir: number, name: string, create: boolean, given: string): number | { link: string } {
    for (let attempt = 0; ; attempt++) {
      try {
        return openSync(inFolder(dir, name), FOLDER_FLAGS)
      } catch (e) {
        if (attempt >= RETRIES) throw e
        if (errno(e) === 'ENOENT' && create) {
          this.verify(dir, given) // the folder we are about to create in lies inside
          try {
            mkdirSync(inFolder(dir, name))
          } catch (err) {
            if (errno(err) !== 'EEXIST') throw err
          }
          continue
        }
        const link = linkBehind(e, dir, name)
        if (link === undefined) throw e
        if (link !== 'again') return link
      }
    }
  }

  /** Calls `use` on the last name: its result, or the names to walk instead when that name is a symlink. */
  private async useLast<T>(
    dir: number,
    walked: string[],
    name: string | undefined,
    given: string,
    use: UseSpot<T>,
  ): Promise<{ value: T } | string[]> {
    const relative = name === undefined ? '.' : [...walked, name].join('/')
    for (let attempt = 0; ; attempt++) {
      try {
        return { value: await use({ dir, name, relative }, this) }
      } catch (e) {
        const link = name === undefined || attempt >= RETRIES ? undefined : linkBehind(e, dir, name)
        if (link === undefined) throw e
        if (link !== 'again') return this.follow(given, walked, link.link, [])
      }
    }
  }

  /** The names to walk after meeting a symlink to `target` in folder `walked`, followed by `rest`. */
  private follow(given: string, walked: string[], target: string, rest: string[]): string[] {
    const to = path.resolve(this.real, ...walked, target)
    for (const root of [this.real, this.configured]) if (isInside(root, to)) return [...namesBelow(root, to), ...rest]
    throw outsideWorkspace(this.action, this.configured, given, `leads through a symlink to ${to}`)
  }
}

// --- internal ---

/**
 * After an open or stat of `name` in `dir` failed with `e`: the symlink's target when `name` is a symlink (the
 * O_NOFOLLOW refusal), 'again' when it was one a moment ago and the lookup is worth repeating, or undefined when
 * `e` is the real answer.
 */
function linkBehind(e: unknown, dir: number, name: string): { link: string } | 'again' | undefined {
  const code = errno(e)
  if (code !== 'ELOOP' && code !== 'ENOTDIR') return undefined
  try {
    return { link: readlinkSync(inFolder(dir, name)) }
  } catch (err) {
    // EINVAL: not a symlink now. After ELOOP (O_NOFOLLOW's refusal) a symlink was there a moment ago, so it was
    // swapped: look again. After ENOTDIR it is a file where a folder was expected, or it was swapped too: look
    // again, and the callers' retry limit turns a real file into the ENOTDIR it is. ENOENT: it vanished; the next
    // lookup says so.
    const now = errno(err)
    return now === 'ENOENT' || now === 'EINVAL' ? 'again' : undefined
  }
}

function errno(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

function workspaceError(action: string, workspace: string, e: unknown): TeaError {
  const why = errno(e) === 'ENOENT' ? 'does not exist' : errno(e) === 'ENOTDIR' ? 'is not a folder' : `cannot be opened (${String(e)})`
  return new TeaError('FILE_ERROR', `${action}: the workspace ${workspace} ${why}`, {
    cause: e,
    details: { workspace },
    hint: 'create it, or change settings.workspace',
  })
}
