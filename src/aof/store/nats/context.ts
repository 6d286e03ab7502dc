/**
 * What every part of the JetStream store works on (store.ts has the layout): the connection, the buckets and stream of
 * one project, how values are packed (payload.ts), and the task entries read so far. `openContext` connects and
 * creates what is missing; the parts (tasks.ts, leases.ts, unit.ts, files.ts, messages.ts, event-log.ts) are
 * functions of it.
 */

import { TeaError } from '../../../core/errors.ts'
import type { Task } from '../../protocol/task-file.ts'
import { type KV, type NatsOptions, type ObjectStore, connectNats, splitUrl } from './client.ts'
import { type Payloads, payloads } from './payload.ts'
import { runsBucket } from './runs-bucket.ts'

export interface NatsStoreOptions extends NatsOptions {
  /** Prefix of every bucket and stream, so one server can hold several projects (default `tea`). */
  project?: string
}

/** A task and the revision of its entry. */
export interface Entry {
  task: Task
  revision: number
}

type Connection = Awaited<ReturnType<typeof connectNats>>

export interface NatsContext {
  /** The project prefix. */
  p: string
  /** `<server>/<project>`, credentials left out: what messages name. */
  where: string
  nc: Connection['nc']
  js: Connection['js']
  jsm: Connection['jsm']
  tasks: KV
  runs: KV
  files: ObjectStore
  /** The event stream `<p>_events`. */
  stream: string
  big: Payloads
  pack(text: string): Promise<Uint8Array>
  unpack(bytes: Uint8Array): Promise<string>
  /** Entries parsed so far, by task id (see `read` in task-entry.ts). */
  parsed: Map<string, Entry>
  bucket: ReturnType<typeof runsBucket>
  pathOf(id: string): string
}

const enc = new TextEncoder()
const dec = new TextDecoder()

export async function openContext(options: NatsStoreOptions): Promise<NatsContext> {
  const p = options.project ?? 'tea'
  if (!/^[A-Za-z0-9_-]+$/.test(p))
    throw new TeaError('AOF_INVALID', `a NATS project name is letters, digits, _ and -; received ${JSON.stringify(p)}`)
  const { nc, js, jsm, kvm, objm, maxPayload } = await connectNats(options)
  const shown = splitUrl(options.url).shown
  const where = `${shown}/${p}`
  const stream = `${p}_events`
  let tasks: KV
  let runs: KV
  let files: ObjectStore
  try {
    tasks = await kvm.create(`${p}_tasks`, { history: 1, storage: 'file' })
    runs = await kvm.create(`${p}_runs`, { history: 1, storage: 'file' })
    files = await objm.create(`${p}_files`, { storage: 'file' })
    const subjects = [`${p}.events.>`, `${p}.msg.>`]
    let info
    try {
      info = await jsm.streams.info(stream)
    } catch {
      await jsm.streams.add({ name: stream, subjects, duplicate_window: 120_000_000_000 })
    }
    // A stream made before messages were recorded on it (events only) is given the message subjects.
    if (info && !subjects.every((x) => info.config.subjects?.includes(x))) {
      await jsm.streams.update(stream, { ...info.config, subjects: [...new Set([...(info.config.subjects ?? []), ...subjects])] })
    }
  } catch (e) {
    await nc.close()
    throw new TeaError('NATS_CONNECT', `cannot open the tea buckets on ${shown}: ${(e as Error).message}`)
  }
  const big = payloads(files, `${p}_files`, maxPayload)
  const pack = (text: string) => big.shrink(enc.encode(text))
  const unpack = async (bytes: Uint8Array) => dec.decode(await big.expand(bytes))
  return {
    p,
    where,
    nc,
    js,
    jsm,
    tasks,
    runs,
    files,
    stream,
    big,
    pack,
    unpack,
    parsed: new Map(),
    bucket: runsBucket(runs, pack, unpack),
    pathOf: (id) => `${where}/tasks/${id}`,
  }
}
