/**
 * `mqtt.publish`: one message to the broker of `settings.mqtt` (or, in `tea serve`, of its config's `mqtt:` when
 * the agent names none). A payload that is not text is sent as JSON. With QoS 1 or 2 the action ends once the
 * broker has acknowledged the message, so a run's checkpoint after it means the broker has it.
 *
 * Each call opens its own connection (a fresh client id, clean session) and closes it: a `tea run` must not be
 * kept alive by an open socket, and a publisher that shared `tea serve`'s client id would cut its session off.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { type MqttBroker, mqttSettingsSchema } from '../mqtt-settings.ts'
import { type ActionContext, defineAction } from '../types.ts'

/** Most bytes one message may carry (as tea serve's request bodies and trigger payloads). */
const MAX_PAYLOAD = 1 << 20

export const mqttPublish = defineAction({
  name: 'mqtt.publish',
  description:
    'Publishes one MQTT message to the broker of settings.mqtt: payload text as is, anything else as JSON; returns {topic, qos, retain, bytes, success}.',
  params: v.object({
    topic: v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(65_535, 'must be at most 65,535 characters'),
      v.check((t) => !/[+#]/.test(t), 'a topic to publish to has no wildcards (+, #)'),
      v.description('The topic, e.g. greenhouse/alarm.'),
    ),
    payload: v.optional(v.pipe(v.unknown(), v.description('Text as is; an object, list, number or boolean as JSON.'))),
    qos: v.optional(v.pipe(v.picklist([0, 1, 2], 'must be 0, 1 or 2'), v.description('Delivery guarantee (default 1).')), 1),
    retain: v.optional(v.pipe(v.boolean(), v.description('The broker keeps it for later subscribers (default false).')), false),
    timeout: v.optional(
      v.pipe(
        v.number(),
        v.gtValue(0, 'must be > 0'),
        v.maxValue(300, 'must be ≤ 300'),
        v.description('Seconds to connect and publish (default 10).'),
      ),
      10,
    ),
  }),
  async run(p, ctx) {
    const broker = brokerOf(ctx)
    const body = p.payload === undefined ? '' : typeof p.payload === 'string' ? p.payload : JSON.stringify(p.payload)
    const bytes = Buffer.byteLength(body)
    if (bytes > MAX_PAYLOAD)
      throw new TeaError('INVALID_PARAMS', `mqtt.publish: the payload is ${bytes} bytes, over the limit of ${MAX_PAYLOAD}`, {
        where: { node: ctx.node },
      })
    await publishOnce(broker, ctx, p.topic, body, { qos: p.qos, retain: p.retain }, p.timeout * 1000)
    return { topic: p.topic, qos: p.qos, retain: p.retain, bytes, success: true }
  },
})

function brokerOf(ctx: ActionContext): MqttBroker {
  const section = ctx.settings.sections.mqtt
  if (!section)
    throw new TeaError(
      'INVALID_PARAMS',
      'mqtt.publish: no broker: give the agent settings.mqtt.url (or run it in a tea serve whose config has mqtt:)',
      {
        where: { node: ctx.node },
      },
    )
  const r = v.safeParse(mqttSettingsSchema, section)
  if (!r.success) throw new TeaError('INVALID_PARAMS', `mqtt.publish: settings.mqtt: ${r.issues[0].message}`, { where: { node: ctx.node } })
  return r.output
}

async function publishOnce(
  broker: MqttBroker,
  ctx: ActionContext,
  topic: string,
  body: string,
  options: { qos: 0 | 1 | 2; retain: boolean },
  timeoutMs: number,
): Promise<void> {
  // The mqtt package loads at the first publish, not with the family: an action that dispatches loads every family
  // (reason.react, flow.*), and mqtt.js would bring net, tty and perf_hooks into every such run.
  const { brokerOptions, connectProblem, mqttClient, shownUrl } = await import('./client.ts')
  const where = shownUrl(broker.url)
  const client = mqttClient(broker.url, {
    ...brokerOptions(broker, ctx.settings.workspace),
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: timeoutMs,
  })
  const fail = (e: unknown) =>
    new TeaError('MQTT_CONNECT', `cannot publish to ${where}: ${connectProblem(e)}`, {
      where: { node: ctx.node },
      hint: 'check settings.mqtt (url, username, password) and that the broker runs',
    })
  let timer: NodeJS.Timeout | undefined
  const onAbort = () => client.end(true)
  ctx.signal.addEventListener('abort', onAbort, { once: true })
  try {
    await Promise.race([
      new Promise<void>((done, reject) => {
        client.once('error', (e) => reject(fail(e)))
        client.once('close', () => reject(fail(new Error('the connection closed'))))
        client.publish(topic, body, options, (e) => (e ? reject(fail(e)) : done()))
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(fail(new Error(`no answer within ${timeoutMs / 1000} s`))), timeoutMs)
      }),
    ])
  } finally {
    clearTimeout(timer)
    ctx.signal.removeEventListener('abort', onAbort)
    // Ended gracefully only when connected: mqtt.js's end() during a failed connection never calls back.
    if (client.connected) await client.endAsync().catch(() => {})
    else client.end(true)
  }
  ctx.signal.throwIfAborted()
}
