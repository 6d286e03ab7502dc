/**
 * How an agent run's end becomes a `completion.report` payload (SPEC §3.10).
 *
 * A completed run reports what its final state says:
 *   - `outcome`: `done` (also when absent), `blocked`, `needs_review`, `partial`; `failed` is taken as `blocked`
 *     (AOF/1 has no "failed" outcome: the reference moves a task whose run failed to `blocked`); any other value is
 *     reported as `blocked`, with a blocker naming the value, so a typo never passes as success;
 *   - `summary` (else `notes`) → `notes` (a non-string is written as JSON); `summaryRef`, `deliverables`,
 *     `blockers`, `tests` {total, passed, failed} when present and well-formed.
 * Texts are clipped to the protocol's limits (notes 10 000, list items 256, 20 blockers, 50 deliverables) rather
 * than having the report refused after the work is done.
 * A failed run reports `blocked` with the error as its blocker; a run paused at an interrupt reports
 * `needs_review`: a person has to look at it, and the note says how to continue the run.
 */

import { isPlainObject, type State } from '../../core/util.ts'
import type { Outcome } from './schemas/payloads.ts'
import type { RouteOutcome } from './route-outcome.ts'
import type { TaskStatus } from './status.ts'

export interface CompletionPayload {
  outcome: Outcome
  summaryRef: string
  deliverables: string[]
  tests: { total: number; passed: number; failed: number }
  blockers: string[]
  notes: string
}

const OUTCOME_OF: Readonly<Record<string, Outcome>> = {
  done: 'done',
  blocked: 'blocked',
  needs_review: 'needs_review',
  partial: 'partial',
  failed: 'blocked',
}

export function completionFromState(state: State): CompletionPayload {
  const blockers = texts(state.blockers, 20)
  const raw = state.outcome
  let outcome: Outcome = 'done'
  if (raw !== undefined && raw !== null) {
    const known = typeof raw === 'string' && Object.hasOwn(OUTCOME_OF, raw) ? OUTCOME_OF[raw] : undefined
    if (known) {
      outcome = known
      if (raw === 'failed' && blockers.length === 0) blockers.push('the agent reported outcome "failed"')
    } else {
      outcome = 'blocked'
      blockers.unshift(
        clip(`the agent ended with outcome ${JSON.stringify(raw)}; expected done, blocked, needs_review, partial or failed`, 256),
      )
    }
  }
  return {
    outcome,
    summaryRef: typeof state.summaryRef === 'string' && state.summaryRef.length <= 256 ? state.summaryRef : '',
    deliverables: texts(state.deliverables, 50),
    tests: tests(state.tests),
    blockers: blockers.slice(0, 20),
    notes: clip(note(state.summary) ?? note(state.notes) ?? '', 10_000),
  }
}

export interface RunFailure {
  code: string
  message: string
  node?: string | undefined
}

export function completionFromFailure(runId: string, error: RunFailure): CompletionPayload {
  const where = error.node ? ` at node '${error.node}'` : ''
  return {
    ...empty(),
    outcome: 'blocked',
    blockers: [clip(`agent run failed${where}: [${error.code}] ${error.message}`, 256)],
    notes: clip(
      `The agent run ${runId} failed${where}: [${error.code}] ${error.message}\n` +
        `Its checkpoints are kept (tea runs, tea resume ${runId}). Move the task back to ready to retry it with a fresh run.`,
      10_000,
    ),
  }
}

export function completionFromInterrupt(runId: string, node: string, when: 'before' | 'after'): CompletionPayload {
  return {
    ...empty(),
    outcome: 'needs_review',
    notes: `The agent run ${runId} paused at its interrupt ${when} node '${node}'. Its state is kept; continue it with: tea resume ${runId}`,
  }
}

function empty(): CompletionPayload {
  return { outcome: 'done', summaryRef: '', deliverables: [], tests: { total: 0, passed: 0, failed: 0 }, blockers: [], notes: '' }
}

function note(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined
  return typeof v === 'string' ? v : JSON.stringify(v)
}

function texts(v: unknown, max: number): string[] {
  if (!Array.isArray(v)) return []
  return v
    .filter((x) => x !== undefined && x !== null)
    .slice(0, max)
    .map((x) => clip(typeof x === 'string' ? x : JSON.stringify(x), 256))
}

function tests(v: unknown): CompletionPayload['tests'] {
  if (!isPlainObject(v)) return { total: 0, passed: 0, failed: 0 }
  const n = (x: unknown): number | undefined => (typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : undefined)
  const total = n(v.total)
  const passed = n(v.passed)
  const failed = n(v.failed)
  if (total === undefined || passed === undefined || failed === undefined || passed + failed > total)
    return { total: 0, passed: 0, failed: 0 }
  return { total, passed, failed }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

export type WorkerReport =
  /** The worker's report went through the router's handler (accepted, or rejected with a reason). */
  | { kind: 'sent'; outcome: Outcome; route: RouteOutcome; status?: TaskStatus }
  /** The agent had already reported for this run. */
  | { kind: 'agent'; outcome: Outcome; status?: TaskStatus }
  /** The task left the run (reclaimed, moved, re-leased): nothing was applied (on NATS logged as `stale_run`). */
  | { kind: 'lost'; status?: TaskStatus; reason?: 'stale_run' }

export interface ReportTarget {
  taskId: string
  agentId: string
  aofRunId: string
  /** `toAgent` of the envelope (default "orchestrator", as the aof.* actions). */
  to?: string
}
