/**
 * A hand-built ActionContext for action unit tests: a fresh temp dir as the workspace, events collected in
 * `events`, a real AbortSignal, and every member a test did not supply throwing "not available in this test"
 * when used, so a test that reaches for the model or the store by accident fails loudly.
 *
 * `render` uses the real template language (src/template) over `state`, `variables` and the extra names, as the
 * engine does.
 */

import { rmSync } from 'node:fs'
import { compileTemplate, compileValue } from '../../src/template/index.ts'
import { DEFAULT_RUN_MEMORY_MB, type ActionContext, type AgentSettingsView } from '../../src/actions/types.ts'
import type { RunEvent } from '../../src/core/events.ts'
import { tempDir } from '../support/temp-dir.ts'

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
  const workspace = settings?.workspace ?? tempDir('tea-actions-')
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
      run_memory_mb: DEFAULT_RUN_MEMORY_MB,
      http_allow: [],
      checkpoint_keep: 3,
      max_template_bytes: 1 << 20,
      sections: {},
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
    render(value, extra, field = 'value') {
      return compileValue(value, { node: ctx.node, field }).render({ state: ctx.state, variables: ctx.variables, ...extra })
    },
    renderCode(source, outputFor, field = 'run') {
      const template = compileTemplate(source, { node: ctx.node, field }, { output: outputFor(source) })
      return String(template.render({ state: ctx.state, variables: ctx.variables }))
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
