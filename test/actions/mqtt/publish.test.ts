/**
 * mqtt.publish's parameters and broker (issue 32), without a broker: what it refuses before connecting. Publishing
 * itself runs against a real mosquitto in test/e2e/serve-mqtt.test.ts.
 */

import * as v from 'valibot'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mqttPublish } from '../../../src/actions/mqtt/publish.ts'
import { errorMessage, isTeaError } from '../../../src/core/errors.ts'
import { testContext } from '../context.ts'

test('a topic with a wildcard, a QoS other than 0, 1, 2 and a zero timeout are refused; the defaults are QoS 1, not retained, 10 s', () => {
  assert.not.ok(v.safeParse(mqttPublish.params, { topic: 'home/+/motion' }).success)
  assert.not.ok(v.safeParse(mqttPublish.params, { topic: 'home/#' }).success)
  assert.not.ok(v.safeParse(mqttPublish.params, { topic: 'a', qos: 3 }).success)
  assert.not.ok(v.safeParse(mqttPublish.params, { topic: 'a', timeout: 0 }).success)
  assert.equal(v.parse(mqttPublish.params, { topic: 'home/hall' }), { topic: 'home/hall', qos: 1, retain: false, timeout: 10 })
})

test('without settings.mqtt the action says to add it; a payload over 1 MiB is refused before any connection', async () => {
  const none = testContext()
  try {
    await mqttPublish.run(v.parse(mqttPublish.params, { topic: 'a' }), none)
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'INVALID_PARAMS'), String(e))
    assert.match(errorMessage(e), 'give the agent settings.mqtt.url')
  } finally {
    none.cleanup()
  }
  // Port 9 (discard) on loopback: were a connection tried, it would fail with MQTT_CONNECT instead.
  const big = testContext({ settings: { sections: { mqtt: { url: 'mqtt://127.0.0.1:9' } } } })
  try {
    await mqttPublish.run(v.parse(mqttPublish.params, { topic: 'a', payload: 'x'.repeat((1 << 20) + 1) }), big)
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'INVALID_PARAMS'), String(e))
    assert.match(errorMessage(e), 'over the limit of 1048576')
  } finally {
    big.cleanup()
  }
})

test('an unreachable broker is MQTT_CONNECT naming it without its password', async () => {
  const ctx = testContext({ settings: { sections: { mqtt: { url: 'mqtt://board:s3cret-word@127.0.0.1:9', password: 'other-s3cret' } } } })
  try {
    await mqttPublish.run(v.parse(mqttPublish.params, { topic: 'a', payload: { n: 1 }, timeout: 5 }), ctx)
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'MQTT_CONNECT'), String(e))
    assert.match(errorMessage(e), 'cannot publish to mqtt://127.0.0.1:9')
    assert.not.match(errorMessage(e), /s3cret/)
  } finally {
    ctx.cleanup()
  }
})

test.run()
