import type { Action } from '../types.ts'
import { mqttPublish } from './publish.ts'

/** MQTT (publish.ts); tea serve's triggers subscribe through the same client module. */
export const mqttActions: Action[] = [mqttPublish]
