/** Flags several commands share, defined once so their help reads the same everywhere. */

import type { ArgDef, NumberFlag, StringFlag } from '../command.ts'

export const DATA_DIR = {
  type: 'string',
  value: 'DIR',
  description: 'where runs, checkpoints and AOF folders are stored',
  defaultText: '$TEA_DATA_DIR, else ./.tea',
} as const satisfies StringFlag

export const MODEL = {
  type: 'string',
  value: 'SPEC',
  description: "the model every call goes to, overriding the agent's own (e.g. ollama:qwen2.5:1.5b, openai:gpt-4o-mini)",
} as const satisfies StringFlag

export const REPLAY = {
  type: 'string',
  value: 'CASSETTE',
  description: 'answer model calls from a JSONL cassette (no model server is contacted)',
} as const satisfies StringFlag

/** An AOF task id as an argument (its form is checked by the command: aof-common.ts `requireTaskId`). */
export const TASK_ID = { name: 'id', value: 'TASK-ID', description: 'the task, e.g. TASK-2026-02-09-001' } as const satisfies ArgDef

export const NATS = {
  type: 'string',
  value: 'URL',
  description: 'use the task store on this NATS JetStream server instead of the data dir (docs/fleet.md); a tls:// URL requires TLS',
  defaultText: '$TEA_NATS_URL',
} as const satisfies StringFlag

export const NATS_CREDS = {
  type: 'string',
  value: 'FILE',
  description: 'a NATS credentials file (JWT and nkey seed)',
  defaultText: '$TEA_NATS_CREDS',
} as const satisfies StringFlag

export const NATS_TLS_CA = {
  type: 'string',
  value: 'FILE',
  description: "a CA certificate (PEM) to trust for the NATS server's TLS certificate; asks for TLS",
  defaultText: '$TEA_NATS_TLS_CA',
} as const satisfies StringFlag

export const NATS_TLS_CERT = {
  type: 'string',
  value: 'FILE',
  description: 'a client certificate (PEM) for mutual TLS with the NATS server; needs --nats-tls-key',
  defaultText: '$TEA_NATS_TLS_CERT',
} as const satisfies StringFlag

export const NATS_TLS_KEY = {
  type: 'string',
  value: 'FILE',
  description: "the client certificate's private key (PEM)",
  defaultText: '$TEA_NATS_TLS_KEY',
} as const satisfies StringFlag

export const NATS_TIMEOUT = {
  type: 'ms',
  value: 'MS',
  min: 100,
  description: 'how long connecting to the NATS server may take before the command fails (default 5000)',
} as const satisfies NumberFlag

/**
 * The flags that choose the task store: the data dir, or a NATS server (a `tls://` URL or any TLS file asks for
 * TLS, and the connection is refused unless it is encrypted).
 */
export const STORE_FLAGS = {
  'data-dir': DATA_DIR,
  nats: NATS,
  'nats-creds': NATS_CREDS,
  'nats-tls-ca': NATS_TLS_CA,
  'nats-tls-cert': NATS_TLS_CERT,
  'nats-tls-key': NATS_TLS_KEY,
  'nats-timeout-ms': NATS_TIMEOUT,
} as const

/** The NATS half of STORE_FLAGS, for commands that have their own --data-dir (`tea run`, `tea resume`). */
export const NATS_FLAGS = {
  nats: NATS,
  'nats-creds': NATS_CREDS,
  'nats-tls-ca': NATS_TLS_CA,
  'nats-tls-cert': NATS_TLS_CERT,
  'nats-tls-key': NATS_TLS_KEY,
  'nats-timeout-ms': NATS_TIMEOUT,
} as const
