/**
 * Asynchronous reads and writes on a raw descriptor. The walk in `beneath.ts` hands out descriptors, and
 * fs/promises only works on its own FileHandles, so these wrap the callback API, which takes a descriptor.
 */

import { fsync, readFile, writeFile } from 'node:fs'

/** Everything from the descriptor's current position to the end. */
export function readAll(fd: number): Promise<Buffer> {
  return new Promise((resolve, reject) => readFile(fd, (e, data) => (e ? reject(e) : resolve(data))))
}

/** All of `data`, at the current position (at the end for an O_APPEND descriptor). */
export function writeAll(fd: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => writeFile(fd, data, (e) => (e ? reject(e) : resolve())))
}

export function flushToDisk(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())))
}
