/**
 * A hand-built ActionContext for action unit tests: a fresh temp dir as the workspace, events collected in
 * `events`, a real AbortSignal, and every member a test did not supply throwing "not available in this test"
 * when used, so a test that reaches for the model or the store by accident fails loudly.
 *
 * `render` here is a stand-in until src/template exists: it understands `{{ name.path[0].x }}` (a value that is
 * exactly one such expression yields the native value, otherwise the string is interpolated) and nothing else
 * (no filters, no `{% %}`). Tests that need the real template language should pass their own `render`.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { TeaError } from '../../src/core/errors.ts'
import { isPlainObject } from '../../src/core/util.ts'
import type { ActionContext, AgentSettingsView, RunEvent } from '../../src/actions/types.ts'

export interface TestContext extends ActionContext {
  /** Every event the action emitted, in order. */
  events: RunEvent[]
  /** The workspace temp dir (same as `settings.workspace`). */
  workspace: string
  /** Aborts `signal`. */
  abort(reason?: unknown): void
  /** Removes the workspace temp dir (unless the test supplied `settings.workspace`). */
  cleanup(): void
}

export interface TestContextOverrides extends Partial<Omit<ActionContext, 'settings'>> {
  settings?: Partial<AgentSettingsView>
}

export function testContext(overrides: TestContextOverrides = {}): TestContext {
  const { settings, ...members } = overrides
  // A caller-supplied workspace is the caller's to remove; only our own temp dir is cleaned up.
  const own = settings?.workspace === undefined
  const workspace = settings?.workspace ?? mkdtempSync(path.join(tmpdir(), 'tea-actions-'))
  const controller = new AbortController()
  const events: RunEvent[] = []
  const ctx: TestContext = {
    runId: 'test-run',
    node: 'test-node',
    state: {},
    variables: {},
    // Partial overrides spread as possibly-undefined members; the defaults above them make the cast sound.
    settings: {
      llm: {},
      max_steps: 1000,
      allow_inline_code: true,
      run_timeout: 30,
      checkpoint_keep: 3,
      planner: {},
      ...settings,
      workspace,
    } as AgentSettingsView,
    llm: unavailable('llm'),
    store: unavailable('store'),
    signal: controller.signal,
    emit: (event) => void events.push(event),
    runNode: () => Promise.reject(notAvailable('runNode')),
    invoke: () => Promise.reject(notAvailable('invoke')),
    listActions: () => {
      throw notAvailable('listActions')
    },
    render(value, extra) {
      return renderStub(value, { state: ctx.state, variables: ctx.variables, ...extra })
    },
    ...members,
    events,
    workspace,
    abort: (reason) => controller.abort(reason),
    cleanup: () => {
      if (own) rmSync(workspace, { recursive: true, force: true })
    },
  }
  return ctx
}

function notAvailable(member: string): Error {
  return new Error(`ctx.${member} is not available in this test`)
}

function unavailable<T extends object>(member: string): T {
  return new Proxy({} as T, {
    get(_target, key) {
      throw notAvailable(`${member}.${String(key)}`)
    },
  })
}

// --- internal: the render stand-in ---

const WHOLE = /^\{\{\s*([^{}]+?)\s*\}\}$/
const INNER = /\{\{\s*([^{}]+?)\s*\}\}/g

function renderStub(value: unknown, scope: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value)
    if (whole) return lookup(whole[1]!, scope, value)
    return value.replace(INNER, (_m, expr: string) => {
      const v = lookup(expr, scope, value)
      return typeof v === 'string' ? v : JSON.stringify(v)
    })
  }
  if (Array.isArray(value)) return value.map((v) => renderStub(v, scope))
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderStub(v, scope)]))
  }
  return value
}

function lookup(expr: string, scope: Record<string, unknown>, template: string): unknown {
  const parts = expr.match(/[^.[\]]+/g) ?? []
  if (parts.length === 0 || !/^[\w.[\]]+$/.test(expr)) {
    throw new TeaError('TEMPLATE_ERROR', `test render stub cannot evaluate '${expr}' in ${template}`)
  }
  let v: unknown = scope
  for (const part of parts) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, part)) {
      throw new TeaError('TEMPLATE_ERROR', `'${expr}' is undefined in ${template}`)
    }
    v = (v as Record<string, unknown>)[part]
  }
  return v
}
