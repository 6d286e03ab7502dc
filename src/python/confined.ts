/**
 * The workspace as Python's file operations reach it: `file.*`'s confinement (src/actions/file/beneath.ts), made
 * synchronous because Emscripten's file system is. A path is a list of names below the workspace; each is opened
 * from a descriptor of the folder before it through `/proc/self/fd/N/name` with O_NOFOLLOW, so a rename or a
 * symlink swapped in behind the walk cannot redirect it. A symlink met on the way is followed by hand, from the
 * workspace, and only while its target stays inside (the rule `file.*` applies). What is opened or created is
 * verified by its kernel path (readlink of its descriptor), which catches a folder moved out while held; a regular
 * file with more than one name (a hard link, whose other name may lie outside) is never opened.
 *
 * Errors are errno-style (`code`), mapped to Python's OSError by workspace-fs.ts; a path that leads outside is
 * EACCES, so Python sees PermissionError.
 */

import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, type Stats } from 'node:fs'
import path from 'node:path'
import { descriptorPath, errnoError, FOLDER_FLAGS, inFolder } from '../actions/file/beneath.ts'
import { isInside, namesBelow } from '../actions/file/workspace-path.ts'

/** Linux gives up after 40 symlinks in one lookup; so do we. */
const MAX_LINKS = 40
/** Walks again after a name changed under us at most this often. */
const RETRIES = 3

export class Confined {
  private constructor(
    private readonly root: number,
    private readonly real: string,
    private readonly configured: string,
  ) {}

  /** Opens the workspace (configuration: trusted, a symlink to it is followed); without /proc, nothing works. */
  static open(workspace: string): Confined {
    const root = openSync(workspace, constants.O_RDONLY | constants.O_DIRECTORY)
    try {
      return new Confined(root, readlinkSync(descriptorPath(root)), path.resolve(workspace))
    } catch (e) {
      closeSync(root)
      throw e
    }
  }

  close(): void {
    closeSync(this.root)
  }

  /**
   * Walks to `names` and calls `use` with the folder holding the last name (a descriptor, valid during the call)
   * and that name (undefined for the workspace itself). With `follow`, a symlink at the last name is followed (by
   * hand, inside only); `use` must open the name with O_NOFOLLOW, and an ELOOP or ENOTDIR from it (a link swapped
   * in since) walks again.
   */
  at<T>(names: readonly string[], follow: boolean, use: (dir: number, name: string | undefined) => T): T {
    let todo = [...names]
    for (let links = 0; ; links++) {
      if (links > MAX_LINKS) throw errnoError('ELOOP', 'too many symbolic links')
      const held: number[] = []
      try {
        let dir = this.root
        const walked: string[] = []
        let detour: string[] | undefined
        for (let i = 0; i < todo.length - 1 && !detour; i++) {
          const name = todo[i]!
          const link = symlinkAt(dir, name)
          if (link !== undefined) detour = this.follow(walked, link, todo.slice(i + 1))
          else {
            const fd = openSync(inFolder(dir, name), FOLDER_FLAGS)
            held.push(fd)
            dir = fd
            walked.push(name)
          }
        }
        if (!detour) {
          const last = todo.at(-1)
          if (last === undefined) return use(this.root, undefined)
          const link = follow ? symlinkAt(dir, last) : undefined
          if (link === undefined) {
            return use(dir, last)
          }
          detour = this.follow(walked, link, [])
        }
        todo = detour
      } catch (e) {
        // ELOOP or ENOTDIR from an O_NOFOLLOW open: a symlink swapped in after the look (or a file where a folder
        // was expected). Walk again, a few times: the answer then is the real one.
        const code = (e as { code?: unknown }).code
        if ((code !== 'ENOTDIR' && code !== 'ELOOP') || links >= RETRIES) throw e
      } finally {
        for (const fd of held) closeSync(fd)
      }
    }
  }

  /** Opens the folder `names` (symlinks followed inside), verified inside, for `use`; closes it after. */
  inFolder<T>(names: readonly string[], use: (dir: number) => T): T {
    return this.at(names, true, (dir, name) => {
      if (name === undefined) return use(dir)
      const fd = openSync(inFolder(dir, name), FOLDER_FLAGS)
      try {
        this.verify(fd)
        return use(fd)
      } finally {
        closeSync(fd)
      }
    })
  }

  /** The stat of `names`, symlinks followed inside. */
  stat(names: readonly string[]): Stats {
    return this.at(names, true, (dir, name) => {
      if (name === undefined) return fstatSync(dir)
      const s = lstatSync(inFolder(dir, name))
      if (s.isSymbolicLink()) throw errnoError('ELOOP', 'a symlink was swapped in')
      return s
    })
  }

  /**
   * Opens `names` (which must exist) with `flags` (O_NOFOLLOW added): a folder or a regular file with one name,
   * inside the workspace by its kernel path. The caller closes the descriptor.
   */
  open(names: readonly string[], flags: number): { fd: number; stat: Stats } {
    return this.at(names, true, (dir, name) => {
      // The workspace itself is reopened through its descriptor's magic link, which O_NOFOLLOW would refuse.
      const fd =
        name === undefined
          ? openSync(descriptorPath(dir), flags | constants.O_NONBLOCK | constants.O_NOCTTY)
          : openSync(inFolder(dir, name), flags | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY)
      try {
        const stat = fstatSync(fd)
        if (!stat.isFile() && !stat.isDirectory()) throw errnoError('EACCES', 'not a regular file or folder')
        if (stat.isFile() && stat.nlink > 1) throw errnoError('EACCES', 'a hard link: its other names may lie outside')
        this.verify(fd)
        return { fd, stat }
      } catch (e) {
        closeSync(fd)
        throw e
      }
    })
  }

  /** Refuses descriptor `fd` unless the kernel places its file inside the workspace now. */
  verify(fd: number): void {
    if (fd === this.root) return
    const now = readlinkSync(descriptorPath(fd))
    if (!isInside(this.real, now)) throw errnoError('EACCES', `moved out of the workspace (to ${now})`)
  }

  /** The names to walk after a symlink to `target` in folder `walked`, then `rest`; outside is EACCES. */
  private follow(walked: string[], target: string, rest: string[]): string[] {
    const to = path.resolve(this.real, ...walked, target)
    for (const root of [this.real, this.configured]) if (isInside(root, to)) return [...namesBelow(root, to), ...rest]
    throw errnoError('EACCES', `a symlink leads out of the workspace (to ${to})`)
  }
}

/** The target of `name` in `dir` when it is a symlink now; undefined when it is anything else or missing. */
function symlinkAt(dir: number, name: string): string | undefined {
  try {
    return readlinkSync(inFolder(dir, name))
  } catch {
    return undefined
  }
}
