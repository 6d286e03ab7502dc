/**
 * Home Assistant's MQTT discovery for `tea serve` (`mqtt: {homeassistant: true}`): each agent is a sensor whose
 * state is its last run's status, so a board's agents appear in Home Assistant with no configuration there.
 *
 * Per agent, retained (a Home Assistant that starts later still finds them):
 * - `<prefix>/sensor/<client id>/<agent>/config`: the sensor — its name, a unique id, the state topic, and the
 *   device (the board: one per client id) it belongs to;
 * - `tea/<client id>/<agent>/status`: `{"status", "run_id", "at"}`, the sensor's state being `status`
 *   (completed, failed, interrupted, cancelled) and the rest its attributes.
 * The configs go out at each connection for the agent files of the agents folder, and for an agent whose first
 * run ends; the status when a run ends. Ids keep to the characters discovery allows (`[A-Za-z0-9_-]`).
 */

import type { MqttClient } from '../../actions/mqtt/client.ts'
import { listAgents } from './agents.ts'
import type { ServeMqtt } from './config.ts'

export function homeAssistant(
  client: MqttClient,
  opts: { mqtt: ServeMqtt; clientId: string; agentsDir: string; log(line: string): void },
): { announceAll(): void; status(agent: string, runId: string, status: string): void } {
  const setting = opts.mqtt.homeassistant
  const prefix = (typeof setting === 'object' && setting.prefix) || 'homeassistant'
  const node = discoveryId(opts.clientId)
  const announced = new Set<string>()
  const stateTopic = (agent: string) => `tea/${node}/${discoveryId(agent)}/status`
  const publish = (topic: string, body: unknown): void =>
    void client.publish(topic, JSON.stringify(body), { qos: 1, retain: true }, (e) => {
      if (e) opts.log(`homeassistant: could not publish ${topic}: ${e.message}`)
    })
  const announce = (agent: string): void => {
    const id = discoveryId(agent)
    announced.add(agent)
    publish(`${prefix}/sensor/${node}/${id}/config`, {
      name: agent,
      unique_id: `tea_${node}_${id}`,
      object_id: `tea_${node}_${id}`,
      state_topic: stateTopic(agent),
      value_template: '{{ value_json.status }}',
      json_attributes_topic: stateTopic(agent),
      icon: 'mdi:robot-outline',
      device: { identifiers: [`tea_${node}`], name: `tea ${opts.clientId}`, manufacturer: 'tea', model: 'tea serve' },
    })
  }
  return {
    announceAll() {
      announced.clear()
      for (const a of listAgents(opts.agentsDir)) announce(a.name)
    },
    status(agent, runId, status) {
      if (!announced.has(agent)) announce(agent)
      publish(stateTopic(agent), { status, run_id: runId, at: new Date().toISOString() })
    },
  }
}

/** `name` with every character discovery does not allow in an id turned into `_`. */
function discoveryId(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100) || '_'
}
