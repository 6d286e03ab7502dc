/**
 * The one module that imports the NATS client packages (STYLE.md point 2). It is reached only through a dynamic
 * `import()` when `--nats` / `TEA_NATS_URL` is given, so a run on the filesystem store never loads them.
 * Connecting fails fast with one line naming the URL (the NATS client's own errors say neither where nor why in
 * words a user can act on).
 */

import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { Objm } from '@nats-io/obj'
import { connect, credsAuthenticator } from '@nats-io/transport-node'
import { readFileSync } from 'node:fs'
import { TeaError } from '../../../core/errors.ts'

export type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream'
export { headers } from '@nats-io/transport-node'
export type { KV } from '@nats-io/kv'
export type { ObjectStore } from '@nats-io/obj'

export interface NatsOptions {
  url: string
  /** A `.creds` file (JWT + nkey seed), as `nats` CLI and the server's operator mode use. */
  credsFile?: string
  /** TLS: a CA file to trust, and a client certificate and key for mutual TLS. */
  tlsCa?: string
  tlsCert?: string
  tlsKey?: string
  /** How long the first connect may take (default 5 s). */
  timeoutMs?: number
  /** Connection name shown by the server (`nats server report connections`). */
  name?: string
}

/**
 * TLS is asked for by a `tls://` URL or by any of the CA, certificate and key files; then the connection is refused
 * unless it is encrypted (the client's `tls` option set means "required"). A `nats://` URL to a server that offers
 * TLS is upgraded too, as the client does by default.
 */
export async function connectNats(options: NatsOptions) {
  const wantsTls = /^tls:\/\//i.test(options.url)
  const tls =
    options.tlsCa || options.tlsCert || options.tlsKey || wantsTls
      ? {
          ...(options.tlsCa ? { caFile: options.tlsCa } : {}),
          ...(options.tlsCert ? { certFile: options.tlsCert } : {}),
          ...(options.tlsKey ? { keyFile: options.tlsKey } : {}),
        }
      : undefined
  let authenticator
  if (options.credsFile) {
    try {
      authenticator = credsAuthenticator(readFileSync(options.credsFile))
    } catch (e) {
      throw new TeaError('NATS_CONNECT', `cannot read NATS credentials ${options.credsFile}: ${(e as Error).message}`)
    }
  }
  if ((options.tlsCert === undefined) !== (options.tlsKey === undefined)) {
    throw new TeaError('USAGE', 'a NATS client certificate needs its key: give --nats-tls-cert and --nats-tls-key together')
  }
  const { server: given, user, pass, shown } = splitUrl(options.url)
  // The client dials `nats://`; TLS is then negotiated on that connection (required by the `tls` option).
  const server = given.replace(/^tls:\/\//i, 'nats://')
  try {
    const nc = await connect({
      servers: server,
      ...(user !== undefined ? { user, pass: pass ?? '' } : {}),
      timeout: options.timeoutMs ?? 5_000,
      // A board that loses the server keeps working and reconnects in the background (docs/fleet.md, Partitions).
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      name: options.name ?? 'tea',
      ...(tls ? { tls } : {}),
      ...(authenticator ? { authenticator } : {}),
    })
    const js = jetstream(nc)
    const jsm = await jetstreamManager(nc)
    // What the server accepts in one message (1 MiB unless configured): larger values go to the object store.
    const maxPayload = nc.info?.max_payload ?? 1024 * 1024
    return { nc, js, jsm, kvm: new Kvm(js), objm: new Objm(js), maxPayload }
  } catch (e) {
    if (e instanceof TeaError) throw e
    let reason = connectReason(e)
    // A server that requires a client certificate drops a connection without one after the TLS handshake, so the
    // client only sees silence until its timeout.
    if (reason === 'timed out' && tls && !options.tlsCert)
      reason += '; if the server requires a client certificate, give --nats-tls-cert and --nats-tls-key'
    throw new TeaError('NATS_CONNECT', `cannot reach NATS at ${shown}: ${reason}`)
  }
}

/** A compare-and-set that lost: JetStream's "wrong last sequence" (err_code 10071). */
export function isConflict(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e)
  return /wrong last sequence|10071|key exists/i.test(m)
}

/**
 * `nats://user:pass@host:port`: the client takes the user and password as options, not in the URL, and no
 * message may show the password (`shown` has `***` in its place).
 */
export function splitUrl(url: string): { server: string; user?: string; pass?: string; shown: string } {
  const m = /^([a-z]+:\/\/)([^@/]*)@(.*)$/i.exec(url)
  if (!m) return { server: url, shown: url }
  const [user, pass] = m[2]!.split(':', 2).map((x) => decodeURIComponent(x))
  const server = `${m[1]}${m[3]}`
  const shown = `${m[1]}${m[2]!.includes(':') ? `${m[2]!.split(':')[0]}:***` : m[2]}@${m[3]}`
  return { server, ...(user !== undefined ? { user } : {}), ...(pass !== undefined ? { pass } : {}), shown }
}

function connectReason(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e)
  if (/authorization/i.test(m)) return 'authorization violation (check the user, password or credentials file)'
  if (/ECONNREFUSED|CONNECTION_REFUSED/i.test(m)) return 'connection refused'
  if (/timeout/i.test(m)) return 'timed out'
  if (/tls|certificate|self.signed|SSL/i.test(m)) return `TLS failed (${m}); check --nats-tls-ca, --nats-tls-cert and --nats-tls-key`
  if (/jetstream not enabled|503/i.test(m)) return 'JetStream is not enabled on the server (start it with -js)'
  return m
}
