/**
 * Values larger than one NATS message. The server refuses a publish above its `max_payload` (1 MiB by default, read
 * from the connection's server info), and a KV put or a stream publish is one message. Such a value is put in the
 * object store `<p>_files` (which splits it into chunks below the limit) under `_big/<sha256>`, and the entry or
 * message carries a reference instead:
 *
 *   {"$ref": "obj://<p>_files/_big/<sha256>", "size": <bytes>, "sha256": "<hex>"}
 *
 * Readers resolve the reference and check the digest, so a value is never truncated or silently replaced. Names are
 * the content's digest: writing the same value twice stores it once, and two writers never overwrite each other.
 * An object is not deleted when the entry moves on (a reader may still hold the old reference); `tea aof export`
 * and a fresh import leave them behind.
 */

import { createHash } from 'node:crypto'
import { TeaError } from '../../../core/errors.ts'
import type { ObjectStore } from './client.ts'

export interface PayloadRef {
  $ref: string
  size: number
  sha256: string
}

/** Room kept for headers and the protocol line in a message of `max_payload` bytes. */
const HEADROOM = 512

export interface Payloads {
  /** The bytes to write: `bytes` itself when it fits in one message, else a reference to the stored object. */
  shrink(bytes: Uint8Array): Promise<Uint8Array>
  /** The value a message or entry stands for: itself, or the object its reference names (digest checked). */
  expand(bytes: Uint8Array): Promise<Uint8Array>
  /** The object store's chunk size for other objects (companion files): below the server's limit. */
  chunkSize: number
}

const enc = new TextEncoder()
const dec = new TextDecoder()

export function payloads(files: ObjectStore, bucket: string, maxPayload: number): Payloads {
  const limit = Math.max(maxPayload - HEADROOM, 64)
  const chunkSize = Math.min(128 * 1024, limit)
  return {
    chunkSize,
    async shrink(bytes) {
      if (bytes.length <= limit) return bytes
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      const name = `_big/${sha256}`
      if (!(await files.info(name))) await files.putBlob({ name, options: { max_chunk_size: chunkSize } }, bytes)
      const ref: PayloadRef = { $ref: `obj://${bucket}/${name}`, size: bytes.length, sha256 }
      return enc.encode(JSON.stringify(ref))
    },
    async expand(bytes) {
      const ref = refOf(bytes)
      if (!ref) return bytes
      const name = ref.$ref.slice(`obj://${bucket}/`.length)
      const data = ref.$ref.startsWith(`obj://${bucket}/`) ? await files.getBlob(name) : null
      if (!data) throw new TeaError('AOF_INVALID', `the stored value ${ref.$ref} (${ref.size} bytes) is missing from the object store`)
      const digest = createHash('sha256').update(data).digest('hex')
      if (digest !== ref.sha256 || data.length !== ref.size) {
        throw new TeaError(
          'AOF_INVALID',
          `the stored value ${ref.$ref} does not match its reference (size ${data.length}, sha256 ${digest})`,
        )
      }
      return data
    },
  }
}

/** The reference `bytes` holds, if it is one (a task's text or an event never starts with `{"$ref"`). */
export function refOf(bytes: Uint8Array): PayloadRef | undefined {
  if (bytes.length > 4096 || bytes[0] !== 0x7b) return undefined
  const text = dec.decode(bytes)
  if (!text.startsWith('{"$ref"')) return undefined
  try {
    const r = JSON.parse(text) as PayloadRef
    return typeof r.$ref === 'string' && typeof r.size === 'number' && typeof r.sha256 === 'string' ? r : undefined
  } catch {
    return undefined
  }
}
