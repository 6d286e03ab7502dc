/**
 * The agent's workspace as an Emscripten file system, mounted at the workspace's own path inside the interpreter:
 * `open('data.txt')` reads the file `file.read` would, and nothing else of the host is reachable. It replaces
 * Emscripten's NODEFS, which hands Python's paths to the host kernel as they are (a hard link or a symlink swapped
 * in under a race led outside: probe defects E and D3). Every operation walks the node's names from the workspace
 * through `Confined` (confined.ts), every time, so a node Emscripten cached never stands for a host path.
 *
 * Emscripten resolves paths itself, `..` included, in its own tree; this file system never shows it a symlink (a
 * link inside the workspace reads as its target, a link leading out as EACCES), so Emscripten never resolves a link
 * target either. Python may not create symlinks here. Host descriptors opened for Python's open files are closed
 * by `dispose()` when the run ends, whatever the code left open.
 */

import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  futimesSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { descriptorPath, inFolder } from '../actions/file/beneath.ts'
import { Confined } from './confined.ts'

/** The parts of Emscripten's FS this file system uses (Pyodide's `pyodide.FS`). */
export interface EmscriptenFS {
  createNode(parent: FsNode | null, name: string, mode: number, dev?: number): FsNode
  isDir(mode: number): boolean
  isFile(mode: number): boolean
  ErrnoError: new (errno: number) => Error
}

interface FsNode {
  name: string
  mode: number
  id: number
  parent: FsNode
  node_ops?: unknown
  stream_ops?: unknown
}

interface Stream {
  node: FsNode
  flags: number
  position: number
  nfd?: number
  shared: { refcount?: number }
}

/** Emscripten's open flags (musl's numbering) that reach the host open; creation and truncation happen before. */
const O_ACCMODE = 3
const O_APPEND = 1024

/**
 * A mountable file system type for one run's workspace. `errno` maps a host errno name to Emscripten's number
 * (`pyodide.ERRNO_CODES`).
 */
export function workspaceFs(FS: EmscriptenFS, errno: Record<string, number>, workspace: string) {
  const confined = Confined.open(workspace)
  const open = new Set<number>()
  const fail = (e: unknown): never => {
    if (e instanceof FS.ErrnoError) throw e
    const code = (e as { code?: unknown }).code
    throw new FS.ErrnoError((typeof code === 'string' && errno[code]) || errno.EIO!)
  }
  const attempt = <T>(f: () => T): T => {
    try {
      return f()
    } catch (e) {
      return fail(e)
    }
  }
  const createNode = (parent: FsNode | null, name: string, mode: number): FsNode => {
    if (!FS.isDir(mode) && !FS.isFile(mode)) throw new FS.ErrnoError(errno.EACCES!)
    const node = FS.createNode(parent, name, mode)
    node.node_ops = nodeOps
    node.stream_ops = streamOps
    return node
  }
  const attr = (s: Stats, node: FsNode) => ({
    dev: s.dev,
    ino: node.id,
    mode: s.mode,
    nlink: s.nlink,
    uid: s.uid,
    gid: s.gid,
    rdev: 0,
    size: s.size,
    atime: s.atime,
    mtime: s.mtime,
    ctime: s.ctime,
    blksize: s.blksize,
    blocks: s.blocks,
  })
  const refuse = (): never => {
    throw new FS.ErrnoError(errno.EPERM!)
  }

  const nodeOps = {
    getattr: (node: FsNode) => attempt(() => attr(confined.stat(names(node)), node)),
    setattr: (node: FsNode, a: { mode?: number; atime?: number; mtime?: number; size?: number }) =>
      attempt(() => {
        const flags = a.size === undefined ? constants.O_RDONLY : constants.O_WRONLY
        const { fd, stat } = confined.open(names(node), flags)
        try {
          if (a.mode !== undefined) {
            fchmodSync(fd, a.mode & 0o7777)
            node.mode = (stat.mode & ~0o7777) | (a.mode & 0o7777)
          }
          if (a.atime !== undefined || a.mtime !== undefined)
            futimesSync(fd, new Date(a.atime ?? stat.atimeMs), new Date(a.mtime ?? stat.mtimeMs))
          if (a.size !== undefined) ftruncateSync(fd, a.size)
        } finally {
          closeSync(fd)
        }
      }),
    lookup: (parent: FsNode, name: string) =>
      createNode(
        parent,
        name,
        attempt(() => confined.stat([...names(parent), name]).mode),
      ),
    mknod: (parent: FsNode, name: string, mode: number) => {
      if (!FS.isDir(mode) && !FS.isFile(mode)) refuse()
      attempt(() =>
        confined.inFolder(names(parent), (dir) => {
          if (FS.isDir(mode)) return mkdirSync(inFolder(dir, name), mode & 0o777)
          const fd = openSync(
            inFolder(dir, name),
            constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
            mode & 0o777,
          )
          closeSync(fd)
        }),
      )
      return createNode(parent, name, mode)
    },
    rename: (node: FsNode, newParent: FsNode, newName: string) => {
      attempt(() =>
        confined.inFolder(names(node.parent), (from) =>
          confined.inFolder(names(newParent), (to) => renameSync(inFolder(from, node.name), inFolder(to, newName))),
        ),
      )
      node.name = newName
    },
    unlink: (parent: FsNode, name: string) => attempt(() => confined.inFolder(names(parent), (dir) => unlinkSync(inFolder(dir, name)))),
    rmdir: (parent: FsNode, name: string) => attempt(() => confined.inFolder(names(parent), (dir) => rmdirSync(inFolder(dir, name)))),
    // As file.list does, a name Python could not open is left out (a symlink leading out, a hard link, a FIFO), so
    // one such entry does not make the whole folder unreadable.
    readdir: (node: FsNode) => {
      const here = names(node)
      const all = attempt(() => confined.inFolder(here, (dir) => readdirSync(descriptorPath(dir))))
      return ['.', '..', ...all.filter((name) => usable(confined, [...here, name]))]
    },
    symlink: refuse,
    readlink: () => {
      throw new FS.ErrnoError(errno.EINVAL!)
    },
    statfs: () => ({
      bsize: 4096,
      frsize: 4096,
      blocks: 1e6,
      bfree: 5e5,
      bavail: 5e5,
      files: 1e6,
      ffree: 5e5,
      fsid: 0x7ea,
      flags: 0,
      namelen: 255,
    }),
  }

  const streamOps = {
    open: (stream: Stream) =>
      attempt(() => {
        const access = stream.flags & O_ACCMODE
        const flags =
          (access === 2 ? constants.O_RDWR : access === 1 ? constants.O_WRONLY : constants.O_RDONLY) |
          (stream.flags & O_APPEND ? constants.O_APPEND : 0)
        const { fd } = confined.open(names(stream.node), flags)
        open.add(fd)
        stream.nfd = fd
        stream.shared.refcount = 1
      }),
    close: (stream: Stream) => {
      if (stream.nfd !== undefined && --stream.shared.refcount! === 0 && open.delete(stream.nfd)) attempt(() => closeSync(stream.nfd!))
    },
    dup: (stream: Stream) => {
      stream.shared.refcount = (stream.shared.refcount ?? 1) + 1
    },
    getattr: (stream: Stream) => attempt(() => attr(fstatSync(stream.nfd!), stream.node)),
    read: (stream: Stream, buffer: Uint8Array, offset: number, length: number, position: number) =>
      attempt(() => readSync(stream.nfd!, buffer, offset, length, position)),
    write: (stream: Stream, buffer: Uint8Array, offset: number, length: number, position: number) =>
      attempt(() => writeSync(stream.nfd!, buffer, offset, length, stream.flags & O_APPEND ? null : position)),
    llseek: (stream: Stream, offset: number, whence: number) => {
      let position = offset
      if (whence === 1) position += stream.position
      else if (whence === 2 && FS.isFile(stream.node.mode)) position += attempt(() => fstatSync(stream.nfd!).size)
      if (position < 0) throw new FS.ErrnoError(errno.EINVAL!)
      return position
    },
    mmap: () => {
      throw new FS.ErrnoError(errno.ENODEV!)
    },
  }

  return {
    type: {
      mount: () =>
        createNode(
          null,
          '/',
          attempt(() => confined.stat([]).mode),
        ),
    },
    /** Closes what Python left open and the workspace; the mount is dropped with its interpreter. */
    dispose(): void {
      for (const fd of open) closeSync(fd)
      open.clear()
      confined.close()
    },
  }
}

/** Whether `names` is something Python may open: a folder, or a regular file with one name, inside. */
function usable(confined: Confined, names: string[]): boolean {
  try {
    const s = confined.stat(names)
    return s.isDirectory() || (s.isFile() && s.nlink === 1)
  } catch {
    return false
  }
}

/** A node's names below the mount's root. */
function names(node: FsNode): string[] {
  const parts: string[] = []
  for (let n = node; n.parent !== n; n = n.parent) parts.push(n.name)
  return parts.reverse()
}
