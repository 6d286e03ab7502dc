/**
 * Building blocks shared by the AOF schemas, and the one way we turn valibot issues into the issues of a rejected
 * message: every issue, each with its dot-path, so a rejection tells the sender everything that is wrong at once.
 */

import * as v from 'valibot'
import { TASK_ID_PATTERN } from '../task-id.ts'
import { TASK_STATUSES } from '../status.ts'

/** ISO 8601 date-time with `Z` or an offset; AOF itself writes and prefers `Z` (we always write `Z`). */
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/

const NotArray = v.custom<unknown>((x) => !Array.isArray(x), 'expected a mapping, received an array')

/**
 * `schema` (an object or record schema), refusing an array: valibot's object and record take one (an array is an
 * object, and they build a new mapping from its keys), zod's, which the reference uses, do not. Typed as `schema`.
 */
export const notArray = <S extends v.GenericSchema>(schema: S): S => v.pipe(NotArray, schema) as unknown as S

export const Datetime = v.pipe(
  v.string('expected an ISO 8601 datetime string'),
  v.check(
    (s) => DATETIME.test(s) && isCalendarDatetime(s),
    (i) => `expected an ISO 8601 datetime of a real date and time (e.g. 2026-02-10T10:00:00.000Z), received ${JSON.stringify(i.input)}`,
  ),
)

/**
 * Whether the date and time fields name a real instant: `Date.parse` rolls `2026-02-30` over to 2 March and takes
 * `T24:00` as the next midnight, where the reference (zod `datetime()`) rejects both, and then skips the task.
 */
function isCalendarDatetime(s: string): boolean {
  const [y, mo, d, h, mi, sec] = [0, 5, 8, 11, 14, 17].map((at) => Number(s.slice(at, at + (at === 0 ? 4 : 2))))
  const days = new Date(Date.UTC(y!, mo!, 0)).getUTCDate()
  const seconds = s[16] === ':' ? sec! : 0
  return mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= days && h! <= 23 && mi! <= 59 && seconds <= 59 && !Number.isNaN(Date.parse(s))
}

export const TaskIdSchema = v.pipe(
  v.string('expected a task id string'),
  v.regex(
    TASK_ID_PATTERN,
    (i) => `expected a task id matching TASK-YYYY-MM-DD-NNN or TASK-YYYY-MM-DD-XXXXXXXX, received ${JSON.stringify(i.input)}`,
  ),
)

export const StatusSchema = v.picklist(
  TASK_STATUSES,
  (i) => `expected one of ${TASK_STATUSES.join(', ')}, received ${JSON.stringify(i.input)}`,
)

export const NonEmpty = v.pipe(v.string(), v.minLength(1, 'expected a non-empty string'))

export function text(max: number): v.SchemaWithPipe<readonly [v.StringSchema<undefined>, v.MaxLengthAction<string, number, string>]> {
  return v.pipe(v.string(), v.maxLength(max, `expected at most ${max} characters`))
}

export function textList(items: number, each: number) {
  return v.pipe(v.array(text(each)), v.maxLength(items, `expected at most ${items} items`))
}

/**
 * An issue as AOF/1 puts it on the wire: in a `protocol.message.rejected` event and in the outcome `tea aof send`
 * prints, both read by other agents. Its `path` is a dot string (`payload.blockers.0`, `(root)` for the whole
 * message), the shape the AOF reference writes, so it stays apart from core's `Issue`, whose path is an array of
 * keys; tea's own errors about AOF files carry core issues.
 */
export interface SchemaIssue {
  path: string
  message: string
}

export function issuesOf(issues: readonly v.BaseIssue<unknown>[]): SchemaIssue[] {
  return issues.map((i) => ({ path: v.getDotPath(i) ?? '(root)', message: i.message }))
}
