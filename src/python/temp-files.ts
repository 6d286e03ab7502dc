/**
 * Files Python writes outside the workspace (`/tmp`, its home folder) live in Emscripten's MEMFS, whose contents
 * are JavaScript arrays outside the interpreter's memory: uncounted, a loop writing temporary files would grow the
 * worker past any limit set on the WebAssembly memory. So MEMFS's writes and resizes are counted into the gate's
 * `fileBytes`, and one that would take the interpreter's memory and its files past the limit fails with ENOSPC
 * (Python: OSError "No space left on device"; the run then ends as NODE_MEMORY_LIMIT). A file removed gives its
 * bytes back. The count is per interpreter, which lives for one run.
 */

import type { Gate } from './gate.ts'

interface MemNode {
  contents?: ArrayBufferView | Record<string, unknown>
  usedBytes?: number
}

type Ops = Record<string, (...args: never[]) => unknown>

/** The parts of MEMFS wrapped here: the operations its nodes carry (copied from its own at its first node). */
export interface Memfs {
  ops_table: { file: { node: Ops; stream: Ops }; dir: { node: Ops } } | null
}

interface Fs {
  lookupNode(parent: unknown, name: string): MemNode
  ErrnoError: new (errno: number) => Error
}

export function capTempFiles(memfs: Memfs, FS: Fs, errno: Record<string, number>, gate: Gate): void {
  const table = memfs.ops_table
  if (!table) throw new Error('MEMFS has no nodes yet: nothing to cap')
  const file = table.file
  // A file's contents are a typed array (an Int8Array when sliced from the interpreter's memory), a folder's an object.
  const size = (node: MemNode | undefined): number => (ArrayBuffer.isView(node?.contents) ? (node.contents as Uint8Array).byteLength : 0)
  const counted = <A extends unknown[], R>(f: (...args: A) => R, node: (...args: A) => MemNode, want: (...args: A) => number) =>
    function (this: unknown, ...args: A): R {
      const n = node(...args)
      const before = size(n)
      const more = want(...args) - before
      if (more > 0 && !gate.fits(more)) throw new FS.ErrnoError(errno.ENOSPC!)
      const result = f.apply(this, args)
      gate.fileBytes += size(n) - before
      return result
    }
  const write = file.stream.write as unknown as (s: { node: MemNode }, b: unknown, o: number, length: number, position: number) => number
  file.stream.write = counted(
    write,
    (s) => s.node,
    (_s, _b, _o, length, position) => position + length,
  ) as never
  const setattr = file.node.setattr as unknown as (node: MemNode, attr: { size?: number }) => void
  file.node.setattr = counted(
    setattr,
    (node) => node,
    (node, attr) => attr.size ?? size(node),
  ) as never
  const allocate = file.stream.allocate as unknown as ((s: { node: MemNode }, offset: number, length: number) => void) | undefined
  if (allocate)
    file.stream.allocate = counted(
      allocate,
      (s) => s.node,
      (_s, offset, length) => offset + length,
    ) as never
  const unlink = table.dir.node.unlink as unknown as (parent: unknown, name: string) => void
  table.dir.node.unlink = function (this: unknown, parent: unknown, name: string) {
    let bytes = 0
    try {
      bytes = size(FS.lookupNode(parent, name))
    } catch {
      // not there: unlink says so itself
    }
    unlink.call(this, parent, name)
    gate.fileBytes -= bytes
  } as never
}
