/**
 * The AOF/1 envelope. Validation happens in two steps so that an unknown `type` is reported as such (the
 * reference folds it into a generic envelope failure): first the envelope with `type` as any string, then the
 * payload against the schema of a known type.
 */

import * as v from 'valibot'
import { Datetime, TaskIdSchema } from './common.ts'
import { CompletionReportPayload, HandoffAckPayload, HandoffRequestPayload, StatusUpdatePayload } from './payloads.ts'

/** A raw message larger than this is refused before parsing (`payload_too_large`). */
export const MAX_ENVELOPE_BYTES = 10 * 1024 * 1024

export const MESSAGE_TYPES = ['completion.report', 'status.update', 'handoff.request', 'handoff.accepted', 'handoff.rejected'] as const

export type MessageType = (typeof MESSAGE_TYPES)[number]

export const EnvelopeBase = v.object({
  protocol: v.literal('aof', (i) => `expected protocol "aof", received ${JSON.stringify(i.input)}`),
  version: v.literal(1, (i) => `unsupported version: expected 1, received ${JSON.stringify(i.input)}`),
  type: v.pipe(v.string('expected a message type string'), v.minLength(1)),
  // Optional for us: tea has one task store per data dir. Kept and echoed when present.
  // Plain strings, empty ones included, as in the reference (z.string()); who may speak is the router's question.
  projectId: v.optional(v.string()),
  taskRelpath: v.optional(v.string()),
  taskId: TaskIdSchema,
  fromAgent: v.string(),
  toAgent: v.string(),
  sentAt: Datetime,
  payload: v.unknown(),
})

export const PAYLOAD_SCHEMAS = {
  'completion.report': CompletionReportPayload,
  'status.update': StatusUpdatePayload,
  'handoff.request': HandoffRequestPayload,
  'handoff.accepted': HandoffAckPayload,
  'handoff.rejected': HandoffAckPayload,
} as const

type Base = Omit<v.InferOutput<typeof EnvelopeBase>, 'type' | 'payload'>

export type CompletionReportEnvelope = Base & { type: 'completion.report'; payload: v.InferOutput<typeof CompletionReportPayload> }
export type StatusUpdateEnvelope = Base & { type: 'status.update'; payload: v.InferOutput<typeof StatusUpdatePayload> }
export type HandoffRequestEnvelope = Base & { type: 'handoff.request'; payload: v.InferOutput<typeof HandoffRequestPayload> }
export type HandoffAckEnvelope = Base & { type: 'handoff.accepted' | 'handoff.rejected'; payload: v.InferOutput<typeof HandoffAckPayload> }
/** An envelope whose type we do not handle; it reaches the router so it can be reported as `unknown`. */
export type UnknownEnvelope = Base & { type: string; payload: unknown; unknownType: true }

export type ProtocolEnvelope = CompletionReportEnvelope | StatusUpdateEnvelope | HandoffRequestEnvelope | HandoffAckEnvelope

export function isMessageType(t: string): t is MessageType {
  return (MESSAGE_TYPES as readonly string[]).includes(t)
}
