/**
 * Which task store a `tea aof` command works on: the data dir's folders (the default), or a NATS JetStream server
 * when `--nats URL` or `TEA_NATS_URL` is given. The NATS client is loaded by a dynamic import only then, so a
 * command on the filesystem store neither loads nor parses it (docs/fleet.md, Build).
 */

import { resolve } from 'node:path'
import { withNodeCache } from '../core/builtin.ts'
import { TeaError } from '../core/errors.ts'
import { fsTaskStore } from '../aof/store/fs/store.ts'
import { feature } from '../feature-list.ts'
import type { TaskStore } from '../aof/store/port.ts'
import { contextOf } from './aof-common.ts'
import { type StoreFlags, strayNatsFlag } from './store-flags.ts'
import type { Io } from './io.ts'

export type { StoreFlags }

export async function storeOf(flags: StoreFlags, io: Io): Promise<TaskStore> {
  const url = flags.nats ?? (io.env.TEA_NATS_URL || undefined)
  if (url === undefined) {
    strayNatsFlag(flags)
    return fsTaskStore(contextOf(flags['data-dir'], io))
  }
  const credsFile = flags['nats-creds'] ?? (io.env.TEA_NATS_CREDS || undefined)
  // A target built without the fleet feature (the core one, docs/fleet.md) carries no NATS client: its entry in
  // src/feature-list.ts has no `load`.
  const load = feature('fleet')?.load
  if (!load) {
    const target = typeof __TEA_TARGET__ === 'string' ? __TEA_TARGET__ : 'tea'
    throw new TeaError('USAGE', `this build (${target}) has no NATS fleet store; use a full target for --nats`)
  }
  // The client's requires of net, tls, dns and crypto load with Node's code cache (scripts/build/plugins.mjs,
  // CACHED_BUILTINS); its nuid reads the `crypto` global, whose first read loads Node's web crypto: here, with it too.
  withNodeCache(() => globalThis.crypto)
  const { openNatsStore } = await load()
  if (!openNatsStore) throw new TeaError('INTERNAL', 'the fleet feature has no openNatsStore')
  const file = (flag: 'nats-tls-ca' | 'nats-tls-cert' | 'nats-tls-key', env: string) => {
    const f = flags[flag] ?? (io.env[env] || undefined)
    return f === undefined ? undefined : resolve(io.cwd, f)
  }
  const tlsCa = file('nats-tls-ca', 'TEA_NATS_TLS_CA')
  const tlsCert = file('nats-tls-cert', 'TEA_NATS_TLS_CERT')
  const tlsKey = file('nats-tls-key', 'TEA_NATS_TLS_KEY')
  return openNatsStore({
    url,
    ...(credsFile ? { credsFile } : {}),
    ...(tlsCa ? { tlsCa } : {}),
    ...(tlsCert ? { tlsCert } : {}),
    ...(tlsKey ? { tlsKey } : {}),
    ...(flags['nats-timeout-ms'] !== undefined ? { timeoutMs: flags['nats-timeout-ms'] } : {}),
    ...(io.env.TEA_NATS_PROJECT ? { project: io.env.TEA_NATS_PROJECT } : {}),
  })
}

/** Runs `fn` on the store and closes it (a NATS connection would otherwise keep the process alive). */
export async function withStore<T>(flags: StoreFlags, io: Io, fn: (store: TaskStore) => Promise<T>): Promise<T> {
  const store = await storeOf(flags, io)
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}
