/** MQTT topic filters as tea serve's triggers match them, and the serve config's triggers as it checks them (issue 32). */

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readServeConfig } from '../../../src/cli/serve/config.ts'
import { brokerForAgents, topicMatches } from '../../../src/cli/serve/mqtt-triggers.ts'
import { errorMessage, isTeaError } from '../../../src/core/errors.ts'
import { tempDir } from '../../support/temp-dir.ts'

test('a filter matches as MQTT says: + one level, # the rest (the parent too), $ topics only by name', () => {
  assert.ok(topicMatches('home/+/motion', 'home/hall/motion'))
  assert.not.ok(topicMatches('home/+/motion', 'home/hall/porch/motion'))
  assert.not.ok(topicMatches('home/+/motion', 'home/motion'))
  assert.ok(topicMatches('home/#', 'home/hall/motion'))
  assert.ok(topicMatches('home/#', 'home'))
  assert.ok(topicMatches('#', 'anything/at/all'))
  assert.not.ok(topicMatches('#', '$SYS/broker/uptime'))
  assert.ok(topicMatches('$SYS/broker/uptime', '$SYS/broker/uptime'))
  assert.not.ok(topicMatches('home/hall', 'home/hall/motion'))
})

function config(text: string) {
  const dir = tempDir('tea-serve-config-')
  writeFileSync(join(dir, 'serve.yaml'), text)
  return () => readServeConfig(join(dir, 'serve.yaml'))
}

test('triggers need a broker, distinct names and well-formed filters: every problem is named', () => {
  const read = config(`triggers:
  - { name: motion, agent: alarm, mqtt: "home/+/motion" }
  - { name: motion, agent: alarm, mqtt: "home/#" }
`)
  try {
    read()
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'USAGE'), String(e))
    assert.match(errorMessage(e), "trigger motion: triggers need the config's mqtt: {url, client_id}")
    assert.match(errorMessage(e), 'trigger motion: the name is taken')
  }
  const bad = config(`mqtt: { url: "mqtt://127.0.0.1:1883" }
triggers:
  - { name: motion, agent: alarm, mqtt: "home/hall#" }
`)
  assert.throws(bad, (e: unknown) => isTeaError(e, 'USAGE') && /'#' the whole last level/.test(errorMessage(e)))
})

test("serve's broker reaches agents without its own settings: connection keys only, its files made absolute", () => {
  const read =
    config(`mqtt: { url: "mqtts://broker.lan:8883", client_id: board, username: tea, password_file: secret, ca: ca.pem, homeassistant: true }
triggers: [{ name: motion, agent: alarm, mqtt: "home/+/motion", input: { room: hall } }]
`)
  const c = read()
  assert.equal(c.triggers[0], { name: 'motion', agent: 'alarm', mqtt: 'home/+/motion', qos: 1, input: { room: 'hall' } })
  assert.equal(brokerForAgents(c.mqtt!, c.dir), {
    url: 'mqtts://broker.lan:8883',
    username: 'tea',
    password_file: join(c.dir, 'secret'),
    ca: join(c.dir, 'ca.pem'),
  })
})

test.run()
