/**
 * The one module that imports the `mqtt` package (MQTT 3.1.1 over TCP, TLS or WebSocket): it turns a broker's
 * settings (actions/mqtt-settings.ts) into the client's options — the password read from its file, the TLS files
 * read — and says what went wrong without the password. `mqtt.publish` connects through it for one message;
 * `tea serve`'s triggers hold one long connection (cli/serve/mqtt-triggers.ts). Loaded only by those two.
 */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { connect, type IClientOptions, type MqttClient } from 'mqtt'
import { TeaError } from '../../core/errors.ts'
import type { MqttBroker } from '../mqtt-settings.ts'

export type { IPublishPacket, MqttClient } from 'mqtt'

/** The client's options for `broker`: files named relative to `base` (the agent file's folder, the config's). */
export function brokerOptions(broker: MqttBroker, base: string): IClientOptions {
  const file = (what: string, path: string): Buffer => {
    try {
      return readFileSync(resolve(base, path))
    } catch (e) {
      throw new TeaError('MQTT_CONNECT', `cannot read the MQTT ${what} file ${path}: ${(e as NodeJS.ErrnoException).code ?? e}`)
    }
  }
  const password = broker.password ?? (broker.password_file ? file('password', broker.password_file).toString('utf8').trim() : undefined)
  return {
    ...(broker.username !== undefined && { username: broker.username }),
    ...(password !== undefined && { password }),
    ...(broker.ca && { ca: file('ca', broker.ca) }),
    ...(broker.cert && { cert: file('cert', broker.cert) }),
    ...(broker.key && { key: file('key', broker.key) }),
    ...(broker.reject_unauthorized !== undefined && { rejectUnauthorized: broker.reject_unauthorized }),
  }
}

/** A client for `url` with `options` (mqtt.js's connect: it connects, and reconnects unless reconnectPeriod is 0). */
export function mqttClient(url: string, options: IClientOptions): MqttClient {
  return connect(url, options)
}

/** `url` without a password or user in it, for logs and messages. */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1')
}

/** What a connection error says, without anything secret: the system code, else the broker's refusal. */
export function connectProblem(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown }
  if (typeof err?.code === 'string') return err.code
  const message = typeof err?.message === 'string' ? err.message : String(e)
  return message.replace(/(password|pass)\S*/gi, '$1 …')
}
