/**
 * `tea serve`'s MQTT triggers: one connection to the config's broker (`mqtt:`) under a fixed client id and a
 * persistent session (clean: false), a QoS 1 subscription per trigger, and one run per message, started as a
 * schedule starts one (the agents folder, the run manager's queue and memory guard), with the input
 * `{...trigger.input, topic, payload}` — the payload parsed as JSON when it is JSON, else text — and the id
 * `<trigger>-<sortable id>`.
 *
 * Exactly one run per message, through a broker restart (mqtt.js reconnects; the session and its queued messages
 * are the broker's) and while tea is down (the broker keeps the session's QoS 1 messages): a message is written
 * down before it is acknowledged (trigger-journal.ts says how a second copy is recognised).
 *
 * Everything the broker sends is hostile: a payload over `max_payload_bytes`, one that is not UTF-8, JSON nested
 * too deep, a topic no trigger asked for, a retained message (state, not an event: it comes again with every new
 * subscription) — each is logged with its code and acknowledged, never a run and never a crash. An unreachable
 * broker is logged once per change and retried; the HTTP API goes on meanwhile. No password reaches the log.
 */

import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { isAbsolute, resolve } from 'node:path'
import type { Registry } from '../../actions/registry.ts'
import { brokerOptions, connectProblem, type IPublishPacket, type MqttClient, mqttClient, shownUrl } from '../../actions/mqtt/client.ts'
import type { MqttBroker } from '../../actions/mqtt-settings.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import { errorMessage, isTeaError, TeaError } from '../../core/errors.ts'
import { sortableId } from '../../core/ids.ts'
import { jsonOrText } from '../../core/json.ts'
import type { State } from '../../core/util.ts'
import type { Store } from '../../store/types.ts'
import { resolveAgent } from './agents.ts'
import type { ServeMqtt, TriggerEntry } from './config.ts'
import { homeAssistant } from './home-assistant.ts'
import type { RunManager } from './run-manager.ts'
import { type MessageKey, TriggerJournal } from './trigger-journal.ts'

export interface TriggerContext {
  manager: RunManager
  registry: Registry
  store: Store
  agentsDir: string
  dataDir: string
  /** The serve config's folder: the broker's files are named relative to it. */
  base: string
  log(line: string): void
}

export interface MqttService {
  /** Tells the triggers (and Home Assistant) that a run of this process ended. */
  ended(runId: string, agent: string, status: string): void
  stop(): Promise<void>
}

/** Largest payload a trigger takes unless the config says otherwise: as tea serve's request bodies. */
const MAX_PAYLOAD = 1 << 20
const RECONNECT_MS = 2_000

/** The session's default name at the broker: stable across starts, so the broker keeps messages for it. */
export function defaultClientId(): string {
  return `tea-${hostname()}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)
}

/**
 * The broker as the agents tea serve runs see it when they name none (`mqtt.publish`): its connection settings
 * only, files made absolute (an agent resolves them against its own folder).
 */
export function brokerForAgents(mqtt: ServeMqtt, base: string): MqttBroker {
  const abs = (p: string | undefined) => (p === undefined || isAbsolute(p) ? p : resolve(base, p))
  const { url, username, password, password_file, ca, cert, key, reject_unauthorized } = mqtt
  const entries = {
    url,
    username,
    password,
    password_file: abs(password_file),
    ca: abs(ca),
    cert: abs(cert),
    key: abs(key),
    reject_unauthorized,
  }
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as MqttBroker
}

export async function startMqtt(mqtt: ServeMqtt, triggers: readonly TriggerEntry[], ctx: TriggerContext): Promise<MqttService> {
  const journal = new TriggerJournal(ctx.dataDir)
  const where = shownUrl(mqtt.url)
  const clientId = mqtt.client_id ?? defaultClientId()
  const maxPayload = mqtt.max_payload_bytes ?? MAX_PAYLOAD
  const { log } = ctx

  const start = (t: TriggerEntry, runId: string, input: State, why: string): void => {
    const notStarted = (e: unknown) => {
      log(`trigger ${t.name}: not started: ${isTeaError(e) ? `[${e.code}] ${errorMessage(e)}` : String(e)}`)
      journal.done(runId)
    }
    try {
      requireAgentLoading(resolveAgent(ctx.agentsDir, t.agent), ctx.registry)
        .then((spec) => ctx.manager.start(spec, runId, input))
        .then(() => log(`trigger ${t.name}: started ${runId} (${why})`), notStarted)
    } catch (e) {
      notStarted(e)
    }
  }

  // Messages taken before the last stop whose runs never started (a kill between the write and the start).
  for (const p of journal.pending()) {
    const t = triggers.find((x) => x.name === p.trigger)
    if (ctx.manager.liveStatus(p.runId) || (await ctx.store.getRun(p.runId))) {
      journal.done(p.runId) // started: the resume of unfinished runs has it
    } else if (!t) {
      log(`trigger ${p.trigger}: not in the config any more: the message on ${shown(p.topic)} taken before the stop starts no run`)
      journal.done(p.runId)
    } else {
      start(t, p.runId, p.input, `message on ${shown(p.topic)} taken before tea serve stopped`)
    }
  }

  const take = async (packet: IPublishPacket): Promise<void> => {
    const topic = packet.topic
    if (packet.retain) return log(`mqtt: a retained message on ${shown(topic)} is state, not an event: no run`)
    const matching = triggers.filter((t) => topicMatches(t.mqtt, topic))
    if (!matching.length) return log(`mqtt: no trigger for a message on ${shown(topic)}`)
    const names = matching.map((t) => t.name).join(', ')
    const bytes = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : Buffer.from(packet.payload)
    let payload: unknown
    try {
      payload = readPayload(bytes, maxPayload, topic)
    } catch (e) {
      return log(`trigger ${names}: message on ${shown(topic)} dropped: ${isTeaError(e) ? `[${e.code}] ${e.message}` : String(e)}`)
    }
    const digest = createHash('sha256').update(topic).update('\0').update(bytes).digest('base64url')
    for (const t of matching) {
      const key: MessageKey | undefined =
        packet.qos > 0 && packet.messageId !== undefined ? { trigger: t.name, packetId: packet.messageId, digest } : undefined
      const earlier = key && packet.dup ? journal.runOf(key) : undefined
      if (earlier) {
        log(`trigger ${t.name}: the broker sent the message on ${shown(topic)} again; its run ${earlier} was started already`)
        continue
      }
      const runId = `${t.name}-${sortableId()}`
      const input = { ...t.input, topic, payload }
      await journal.take({ runId, trigger: t.name, topic, input }, key)
      start(t, runId, input, `message on ${shown(topic)}`)
    }
  }

  const client: MqttClient = mqttClient(mqtt.url, {
    ...brokerOptions(mqtt, ctx.base),
    clientId,
    clean: false, // the broker keeps the subscriptions and queues QoS 1 messages while tea is away
    resubscribe: false, // subscribed below, on each connection the broker did not keep a session for
    reconnectPeriod: RECONNECT_MS,
    reconnectOnConnackError: true, // a broker that refuses now (starting, its auth backend down) may accept later
    connectTimeout: 10_000,
  })
  // Called once per message, the next not before this one's callback: the PUBACK goes out after the callback.
  client.handleMessage = (packet, callback) => {
    take(packet).then(
      () => callback(),
      (e: unknown) => {
        // The journal could not be written (a full disk): no PUBACK, so the broker sends the message again later.
        log(`mqtt: a message on ${shown(packet.topic)} could not be written down, not acknowledged: ${errorMessage(e)}`)
        callback(e as Error)
      },
    )
  }
  const ha = mqtt.homeassistant ? homeAssistant(client, { mqtt, clientId, agentsDir: ctx.agentsDir, log }) : undefined
  let stopping = false
  let problem: string | undefined
  let firstConnection = true
  client.on('connect', (connack) => {
    problem = undefined
    log(`mqtt: connected to ${where} as ${clientId} (${connack.sessionPresent ? 'session kept' : 'new session'})`)
    // A fresh process subscribes whatever the broker kept: the config's filters may have changed since.
    if (firstConnection || !connack.sessionPresent) {
      firstConnection = false
      for (const t of triggers)
        client.subscribe(t.mqtt, { qos: t.qos }, (e, granted) => {
          if (e || granted?.[0]?.qos === 128)
            log(`trigger ${t.name}: the broker refused the subscription to ${t.mqtt}${e ? `: ${e.message}` : ''}`)
          else log(`trigger ${t.name}: subscribed to ${t.mqtt} (QoS ${granted?.[0]?.qos ?? t.qos})`)
        })
    }
    ha?.announceAll()
  })
  client.on('error', (e) => {
    const now = `[MQTT_CONNECT] ${connectProblem(e)}`
    if (now !== problem) log(`mqtt: cannot reach ${where}: ${now}; retrying every ${RECONNECT_MS / 1000} s`)
    problem = now
  })
  client.on('offline', () => {
    if (problem === undefined) log(`mqtt: lost the connection to ${where}; reconnecting`)
    problem ??= 'offline'
  })

  return {
    ended(runId, agent, status) {
      journal.done(runId)
      if (!stopping) ha?.status(agent, runId, status) // the runs a shutdown stops end after the client
    },
    async stop() {
      stopping = true
      // mqtt.js's end() calls back only on a live connection; offline, the socket is closed at once.
      if (client.connected) await client.endAsync().catch(() => {})
      else client.end(true)
      await journal.close()
    },
  }
}

/** Whether `topic` matches the MQTT filter `filter` (`+` one level, `#` the rest; `$` topics only by name). */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/')
  const t = topic.split('/')
  if (topic.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true
    if (i >= t.length) return false
    if (f[i] !== '+' && f[i] !== t[i]) return false
  }
  return f.length === t.length
}

/** A payload as a run's input: at most `max` bytes of UTF-8, JSON when it parses (128 levels at most), else text. */
function readPayload(bytes: Buffer, max: number, topic: string): unknown {
  if (bytes.length > max)
    throw new TeaError('INPUT_TOO_LARGE', `its payload is ${bytes.length} bytes, over the limit of ${max} (mqtt.max_payload_bytes)`)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new TeaError('INVALID_INPUT', 'its payload is not UTF-8 text')
  }
  return jsonOrText(text, `the payload of the message on ${shown(topic)}`)
}

/** A topic for the log: bounded, control characters out. */
function shown(topic: string): string {
  const clean = topic.replace(/[\u0000-\u001f\u007f]/g, '?')
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean
}
