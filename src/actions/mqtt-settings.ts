/**
 * The broker an agent's `mqtt.publish` talks to (`settings.mqtt`) and the one `tea serve` connects its triggers to
 * (its config's `mqtt:`): checked when the file loads (agent/schema.ts, cli/serve/config.ts), read when the action
 * runs. It sits outside actions/mqtt/ so that loading a file does not load the MQTT client (test/catalog.test.ts).
 *
 *   settings:
 *     mqtt:
 *       url: mqtts://broker.lan:8883     # mqtt://, mqtts://, ws://, wss://
 *       username: board
 *       password_file: /etc/tea/mqtt-password   # or password: (kept out of logs either way)
 *       ca: /etc/tea/ca.pem                      # TLS files: the broker's CA, and a client certificate and key
 */

import * as v from 'valibot'

const text = v.pipe(v.string(), v.minLength(1, 'must not be empty'))

export const mqttBrokerEntries = {
  url: v.pipe(
    v.string(),
    v.regex(/^(mqtts?|wss?|tcp|ssl):\/\/[^/\s]/i, 'must be a broker URL: mqtt://host:1883, mqtts://host:8883, ws:// or wss://'),
  ),
  username: v.optional(v.string()),
  password: v.optional(v.string()),
  /** A file holding the password (surrounding whitespace trimmed); relative to the agent file or the config. */
  password_file: v.optional(text),
  /** PEM files: the CA that signed the broker's certificate, and a client certificate and its key. */
  ca: v.optional(text),
  cert: v.optional(text),
  key: v.optional(text),
  /** Refuse a broker whose certificate the CA does not vouch for (default true). */
  reject_unauthorized: v.optional(v.boolean()),
}

/** `settings.mqtt` as the loader checks it. */
export const mqttSettingsSchema = v.pipe(
  v.strictObject(mqttBrokerEntries),
  v.check((b) => !(b.password !== undefined && b.password_file !== undefined), 'give password or password_file, not both'),
)

export type MqttBroker = v.InferOutput<typeof mqttSettingsSchema>
