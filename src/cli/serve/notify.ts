/**
 * A phone told when a run pauses at an interrupt: the serve config's `notify: {url, token?, page_url?}` gets an
 * ntfy-compatible POST (https://docs.ntfy.sh/publish/): the body is the message as plain text, `Title`, `Priority`
 * and `Click` (the run on the status page) are headers, `Authorization: Bearer` when a token is given. Any server
 * that takes a POST works (ntfy, Gotify through a proxy, a home automation webhook).
 *
 * It never holds up a run or the daemon: sent after the run has paused, bounded by a timeout, and a failure is a
 * log line. The URL is the board owner's, like a model server's: the destination policy that guards agents' own
 * requests (core/http-policy.ts) does not apply to it.
 */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import { errorMessage, TeaError } from '../../core/errors.ts'
import { httpFetch } from '../../core/http.ts'
import type { Store } from '../../store/types.ts'
import { pausedView } from './agent-view.ts'

export interface NotifySettings {
  url: string
  token?: string
  /** The page's address as the phone reaches it (`http://board.lan:8765`); the listen address otherwise. */
  pageUrl?: string
  /** ntfy's 1 (min) – 5 (max); default 4 (high). */
  priority: number
  timeoutMs: number
}

/** The config's `notify:` entry made ready: its token file read (relative to the config's folder). */
export function notifySettings(
  entry: { url: string; token?: string; token_file?: string; page_url?: string; priority?: number; timeout?: number },
  dir: string,
): NotifySettings {
  let token = entry.token
  if (entry.token_file !== undefined) {
    const file = resolve(dir, entry.token_file)
    try {
      token = readFileSync(file, 'utf8').trim()
    } catch (e) {
      throw new TeaError('USAGE', `cannot read notify.token_file ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`)
    }
  }
  return {
    url: entry.url,
    ...(token && { token }),
    ...(entry.page_url !== undefined && { pageUrl: entry.page_url.replace(/\/+$/, '') }),
    priority: entry.priority ?? 4,
    timeoutMs: (entry.timeout ?? 10) * 1000,
  }
}

/** A header value: one line of printable ASCII (ntfy reads UTF-8 titles only when encoded; a plain one is safe everywhere). */
function headerText(text: string, max = 200): string {
  const flat = text.replace(/[^\x20-\x7e]+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…`.replace(/[^\x20-\x7e]/g, '') : flat
}

export interface PauseNotifier {
  /** Tells the phone that `runId` paused; resolves when sent or failed (never rejects). */
  paused(runId: string): Promise<void>
  /** The address the daemon listens on, for `Click` when the config gives no page_url. */
  listening(url: string): void
}

export function pauseNotifier(
  settings: NotifySettings,
  deps: {
    store: Store
    registry: Registry
    log(line: string): void
    /** The node the run ran last and the keys it wrote (run-manager.ts). */
    lastWrite(runId: string): { node: string; keys: string[] } | undefined
  },
): PauseNotifier {
  let listenUrl: string | undefined
  return {
    listening(url) {
      listenUrl = url
    },
    async paused(runId) {
      try {
        const run = await deps.store.getRun(runId)
        if (!run) return
        const checkpoint = await deps.store.loadLatest(runId)
        let message = `paused at node '${run.node ?? '?'}'`
        let asked: string[] = []
        try {
          const spec = await requireAgentLoading(run.agentPath, deps.registry)
          if (checkpoint) {
            const last = deps.lastWrite(runId)
            const wrote = last && last.node === run.node ? last.keys : []
            const view = pausedView(spec, run.node, checkpoint.cursor, checkpoint.state, wrote)
            message = view.message
            asked = view.keys
          }
        } catch {} // an agent edited since: the node's name still says where
        const body = `${message}\nrun ${runId} (${run.agent})${asked.length ? `\nasks for: ${asked.join(', ')}` : ''}`
        const page = settings.pageUrl ?? listenUrl
        const headers: Record<string, string> = {
          'content-type': 'text/plain; charset=utf-8',
          title: headerText(`${run.agent} waits for you`),
          priority: String(settings.priority),
          tags: 'hourglass',
          ...(page && { click: `${page}/#run=${encodeURIComponent(runId)}` }),
          ...(settings.token && { authorization: `Bearer ${settings.token}` }),
        }
        const reply = await httpFetch(settings.url, {
          method: 'POST',
          headers,
          body: body.length > 4000 ? `${body.slice(0, 3999)}…` : body,
          signal: AbortSignal.timeout(settings.timeoutMs),
        })
        await reply.text().catch(() => '')
        if (!reply.ok) deps.log(`notify: ${shown(settings.url)} answered ${reply.status} for run ${runId}`)
      } catch (e) {
        deps.log(`notify: cannot tell ${shown(settings.url)} that run ${runId} paused: ${errorMessage(e)}`)
      }
    },
  }
}

/** The URL without its query and credentials, for the log (an ntfy topic may be a secret; the host is not). */
function shown(url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}`
  } catch {
    return 'the notify URL'
  }
}
