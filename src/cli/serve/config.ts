/**
 * The serve config (`tea serve --config serve.yaml`): what the flags say, for a service whose unit should not
 * carry them all, plus the schedules. Paths in it are relative to the file. Flags given on the command line win.
 *
 *   agents: ./agents
 *   listen: 127.0.0.1:8765
 *   max_concurrent: 2
 *   allow_hosts: [board.lan]     # Host names the API answers besides loopback and the listen address
 *   resume_limit: 3              # a run whose process died is resumed this many times in a row at most
 *   schedules:
 *     - agent: report            # a name or a path in the agents folder
 *       cron: "0 7 * * *"        # minute hour day-of-month month day-of-week (croner; seconds optional)
 *       input: { place: garden }
 *       timezone: Europe/Berlin  # optional; the board's zone otherwise
 *   mqtt: { url: "mqtt://127.0.0.1:1883", client_id: greenhouse-board }   # the broker of triggers (mqtt-triggers.ts)
 *   triggers:
 *     - name: motion
 *       agent: alarm
 *       mqtt: "home/+/motion"    # a topic filter: one run per message
 *       qos: 1
 *       input: { room: hall }    # merged into the run's input {topic, payload}
 *   notify:                      # a POST when a run pauses at an interrupt (notify.ts), ntfy's format
 *     url: https://ntfy.example/greenhouse-7f3a
 *     token_file: ./ntfy-token   # optional: Authorization: Bearer
 *     page_url: http://board.lan:8765   # optional: where the notification's Click leads
 */

import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import * as v from 'valibot'
import { mqttBrokerEntries } from '../../actions/mqtt-settings.ts'
import { parseYamlValue } from '../../agent/parse.ts'
import { TeaError } from '../../core/errors.ts'
import { toIssues } from '../../core/issues.ts'

const Schedule = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.minLength(1))),
  agent: v.pipe(v.string(), v.minLength(1)),
  cron: v.pipe(v.string(), v.minLength(1)),
  input: v.optional(v.record(v.string(), v.unknown())),
  timezone: v.optional(v.string()),
})

/** A topic filter as MQTT defines one: `+` a whole level, `#` the whole rest, last. */
const topicFilter = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(65_535),
  v.check(
    (f) => f.split('/').every((level, i, all) => !/[+#]/.test(level) || level === '+' || (level === '#' && i === all.length - 1)),
    "'+' must be a whole level and '#' the whole last level (home/+/motion, home/#)",
  ),
)

const Trigger = v.strictObject({
  name: v.pipe(
    v.string(),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/, 'must be 1–60 letters, digits, ".", "_", "-" (it starts the run ids)'),
  ),
  agent: v.pipe(v.string(), v.minLength(1)),
  mqtt: topicFilter,
  qos: v.optional(v.picklist([0, 1], 'must be 0 or 1 (1: a message is not lost while tea is down)'), 1),
  input: v.optional(v.record(v.string(), v.unknown())),
})

const Mqtt = v.pipe(
  v.strictObject({
    ...mqttBrokerEntries,
    /** The session's name at the broker: the same at every start, so messages wait for tea while it is down. */
    client_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
    /** Largest payload a trigger takes (default 1 MiB); a larger message is logged and dropped. */
    max_payload_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64 * 2 ** 20))),
    /** Announce each agent's last run status to Home Assistant (MQTT discovery); `{prefix}` when not `homeassistant`. */
    homeassistant: v.optional(v.union([v.boolean(), v.strictObject({ prefix: v.optional(v.pipe(v.string(), v.minLength(1))) })])),
  }),
  v.check((b) => !(b.password !== undefined && b.password_file !== undefined), 'give password or password_file, not both'),
)

/** A webhook told when a run pauses at an interrupt (notify.ts): an ntfy topic URL or any URL that takes a POST. */
const httpUrl = v.pipe(
  v.string(),
  v.url('must be a URL'),
  v.check((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL'),
)
const Notify = v.pipe(
  v.strictObject({
    url: httpUrl,
    token: v.optional(v.pipe(v.string(), v.minLength(1))),
    token_file: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** The page's address as a phone reaches it, for the notification's Click (the listen address otherwise). */
    page_url: v.optional(httpUrl),
    priority: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5))),
    /** Seconds the POST may take (default 10). */
    timeout: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(60))),
  }),
  v.check((n) => !(n.token !== undefined && n.token_file !== undefined), 'give token or token_file, not both'),
)

const Config = v.strictObject({
  agents: v.optional(v.string()),
  data_dir: v.optional(v.string()),
  listen: v.optional(v.string()),
  token_file: v.optional(v.string()),
  max_concurrent: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))),
  min_free_mb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  allow_hosts: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
  resume_limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1000))),
  schedules: v.optional(v.array(Schedule), []),
  mqtt: v.optional(Mqtt),
  triggers: v.optional(v.array(Trigger), []),
  notify: v.optional(Notify),
})

export type ScheduleEntry = v.InferOutput<typeof Schedule>
export type TriggerEntry = v.InferOutput<typeof Trigger>
export type ServeMqtt = v.InferOutput<typeof Mqtt>
export type ServeConfig = v.InferOutput<typeof Config> & { dir: string }

export function readServeConfig(file: string): ServeConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new TeaError('USAGE', `cannot read --config ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`)
  }
  let data: unknown
  try {
    data = parseYamlValue(text) ?? {}
  } catch (e) {
    throw new TeaError('USAGE', `${file} is not valid YAML: ${(e as Error).message}`)
  }
  const r = v.safeParse(Config, data)
  if (!r.success) throw new TeaError('USAGE', `${file} is not a valid serve config`, { issues: toIssues(r.issues), where: { file } })
  const problems = r.output.triggers.flatMap((t, i) => [
    ...(r.output.mqtt ? [] : [{ message: `trigger ${t.name}: triggers need the config's mqtt: {url, client_id}`, path: ['triggers', i] }]),
    ...(r.output.triggers.findIndex((o) => o.name === t.name) < i
      ? [{ message: `trigger ${t.name}: the name is taken`, path: ['triggers', i, 'name'] }]
      : []),
  ])
  if (problems.length) throw new TeaError('USAGE', `${file} is not a valid serve config`, { issues: problems, where: { file } })
  return { ...r.output, dir: dirname(file) }
}
