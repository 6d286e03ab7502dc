/** The flags that choose a task store, as command bodies read them (their definitions: commands/flags.ts). */

import { TeaError } from '../core/errors.ts'

export interface StoreFlags {
  'data-dir'?: string
  nats?: string
  'nats-creds'?: string
  'nats-tls-ca'?: string
  'nats-tls-cert'?: string
  'nats-tls-key'?: string
  'nats-timeout-ms'?: number
}

/** A NATS-only flag given without a server is a usage error (it would silently do nothing). */
export function strayNatsFlag(flags: StoreFlags): void {
  const stray = (['nats-creds', 'nats-tls-ca', 'nats-tls-cert', 'nats-tls-key', 'nats-timeout-ms'] as const).find(
    (f) => flags[f] !== undefined,
  )
  if (stray) throw new TeaError('USAGE', `--${stray} is for a NATS store: give --nats URL (or set TEA_NATS_URL) with it`)
}
