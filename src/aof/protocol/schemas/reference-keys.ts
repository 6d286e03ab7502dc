/**
 * Task-file keys tea passes through without using them, checked the way the reference implementation checks them
 * (its `TaskFrontmatter` zod schema, v1.20.0). The reference refuses a task whose key breaks these rules, and its
 * store then skips that task silently; tea reads such a task (it never acts on these keys) and `tea aof lint`
 * reports each broken key with what the reference expects (`reference_rejects`), so a mixed tree can be fixed
 * before the reference loses a task.
 *
 * `workflow` is checked down to its hops, hop states and each hop's `condition` expression (the reference's JSON DSL,
 * recursive). The reference bounds a condition's depth and size only when a workflow is created, not when a task
 * is read, so neither is checked here. Timestamps inside these keys must end in `Z`: zod's `datetime()` refuses an
 * offset (tea accepts one in the keys it reads itself; lint flags those as `timestamp_offset`).
 */

import * as v from 'valibot'
import { Datetime, notArray, type SchemaIssue, issuesOf } from './common.ts'

const got = (i: { input: unknown }) => (Array.isArray(i.input) ? 'an array' : (JSON.stringify(i.input) ?? String(i.input)))
// A key that is missing is reported against the schema that requires it, with `input` undefined.
const expect = (what: string) => (i: { input: unknown }) =>
  i.input === undefined ? 'required, missing' : `expected ${what}, received ${got(i)}`

const str = v.string(expect('a string'))
const nonEmpty = v.pipe(v.string(expect('a non-empty string')), v.minLength(1, expect('a non-empty string')))
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => v.picklist(values, expect(`one of ${values.join(', ')}`))
const intAtLeast = (min: number) =>
  v.pipe(v.number(expect(`an integer ≥ ${min}`)), v.integer(expect(`an integer ≥ ${min}`)), v.minValue(min, expect(`an integer ≥ ${min}`)))
const obj = <E extends v.ObjectEntries>(entries: E) => notArray(v.looseObject(entries, expect('a mapping')))
const list = <S extends v.GenericSchema>(item: S) => v.array(item, expect('a list'))
const strings = list(str)
const bool = v.boolean(expect('true or false'))
const record = notArray(v.record(v.string(), v.unknown(), expect('a mapping')))
const Utc = v.pipe(
  Datetime,
  v.check(
    (s) => !/[+-]\d{2}:\d{2}$/.test(s),
    (i) => `expected a UTC datetime ending in Z (the reference refuses an offset), received ${got(i)}`,
  ),
)

const Sla = obj({
  maxInProgressMs: v.optional(
    v.pipe(
      v.number(expect('a positive integer (ms)')),
      v.integer(expect('a positive integer (ms)')),
      v.minValue(1, expect('a positive integer (ms)')),
    ),
  ),
  onViolation: v.optional(oneOf(['alert', 'block', 'deadletter'])),
})

const Gate = obj({ current: nonEmpty, entered: Utc })

const GateHistoryEntry = obj({
  gate: str,
  role: str,
  agent: v.optional(str),
  entered: Utc,
  exited: v.optional(Utc),
  outcome: v.optional(oneOf(['complete', 'needs_review', 'blocked'])),
  summary: v.optional(str),
  blockers: v.optional(strings),
  rejectionNotes: v.optional(str),
  duration: v.optional(intAtLeast(0)),
})

const ReviewContext = obj({
  fromGate: str,
  fromAgent: v.optional(str),
  fromRole: str,
  timestamp: Utc,
  blockers: v.optional(strings),
  notes: v.optional(str),
})

const TestSpec = obj({
  given: str,
  when: str,
  then: obj({
    status: v.optional(v.pipe(v.number(expect('an integer')), v.integer(expect('an integer')))),
    body_contains: v.optional(strings),
  }),
})

const num = v.number(expect('a number'))
const COND_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'has_tag', 'hop_status', 'and', 'or', 'not', 'true', 'false'] as const
const when = <E extends v.ObjectEntries>(entries: E) => v.looseObject(entries, expect('a mapping'))
const op = <const K extends (typeof COND_OPS)[number]>(k: K) => v.literal(k)
/** The reference's condition expression: a union discriminated by `op`, recursive through and/or/not. */
const Condition: v.GenericSchema<unknown> = v.lazy(() =>
  notArray(
    v.variant(
      'op',
      [
        when({ op: v.union([op('eq'), op('neq')]), field: str, value: v.optional(v.unknown()) }),
        when({ op: v.union([op('gt'), op('gte'), op('lt'), op('lte')]), field: str, value: num }),
        when({ op: op('in'), field: str, value: list(v.unknown()) }),
        when({ op: op('has_tag'), value: str }),
        when({ op: op('hop_status'), hop: str, status: str }),
        when({ op: v.union([op('and'), op('or')]), conditions: list(Condition) }),
        when({ op: op('not'), condition: Condition }),
        when({ op: v.union([op('true'), op('false')]) }),
      ],
      expect(`a condition with op one of ${COND_OPS.join(', ')}`),
    ),
  ),
)

const Hop = obj({
  id: nonEmpty,
  role: nonEmpty,
  dependsOn: v.optional(strings),
  joinType: v.optional(oneOf(['all', 'any'])),
  autoAdvance: v.optional(bool),
  condition: v.optional(Condition),
  description: v.optional(str),
  canReject: v.optional(bool),
  rejectionStrategy: v.optional(oneOf(['origin', 'predecessors'])),
  timeout: v.optional(str),
  escalateTo: v.optional(str),
})

const HopState = obj({
  status: oneOf(['pending', 'ready', 'dispatched', 'complete', 'failed', 'skipped']),
  startedAt: v.optional(Utc),
  completedAt: v.optional(Utc),
  agent: v.optional(str),
  correlationId: v.optional(str),
  result: v.optional(record),
  rejectionCount: v.optional(intAtLeast(0)),
  escalated: v.optional(bool),
})

const Workflow = obj({
  definition: obj({ name: nonEmpty, hops: v.pipe(list(Hop), v.minLength(1, expect('at least one hop'))) }),
  state: obj({
    status: oneOf(['pending', 'running', 'complete', 'failed']),
    hops: v.record(v.string(), HopState, expect('a mapping of hop id to hop state')),
    startedAt: v.optional(Utc),
    completedAt: v.optional(Utc),
  }),
  templateName: v.optional(str),
})

const ReferenceKeys = v.looseObject({
  sla: v.optional(Sla),
  metadata: v.optional(record),
  contextTier: v.optional(oneOf(['seed', 'full'])),
  requiredRunbook: v.optional(str),
  instructionsRef: v.optional(nonEmpty),
  guidanceRef: v.optional(nonEmpty),
  resource: v.optional(str),
  callbackDepth: v.optional(intAtLeast(0)),
  gate: v.optional(Gate),
  gateHistory: v.optional(list(GateHistoryEntry)),
  reviewContext: v.optional(ReviewContext),
  tests: v.optional(list(TestSpec)),
  testsFile: v.optional(str),
  workflow: v.optional(Workflow),
})

/** Every way `data` breaks the reference's rules for the keys above; none when the reference would accept them. */
export function referenceKeyIssues(data: Record<string, unknown>): SchemaIssue[] {
  // The reference reads `required_runbook` as `requiredRunbook` when the latter is absent.
  const input =
    data.requiredRunbook === undefined && data.required_runbook !== undefined ? { ...data, requiredRunbook: data.required_runbook } : data
  const r = v.safeParse(ReferenceKeys, input)
  const issues = r.success ? [] : issuesOf(r.issues)
  if (data.gate !== undefined && data.workflow !== undefined)
    issues.push({ path: 'workflow', message: "expected 'gate' or 'workflow', not both (the reference's two workflow kinds are exclusive)" })
  return issues
}
