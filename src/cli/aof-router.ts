/**
 * The `aof.*` actions' task store in `tea run` and `tea resume` (docs/fleet.md): the data dir's folders, or a NATS
 * server given as to `tea aof`. Kept apart from aof-store.ts so that a run loads none of the AOF code until its
 * first message.
 */

import type { TaskStore } from '../aof/store/port.ts'
import type { AofRouter } from '../actions/types.ts'
import { type StoreFlags, strayNatsFlag } from './store-flags.ts'
import type { Io } from './io.ts'

/**
 * The `aof.*` actions' router for `tea run` / `tea resume` (actions/types.ts `AofRouter`): undefined without a NATS
 * server (the actions route on the data dir, as before); else routing on the JetStream store, which is opened by the
 * first message — a run that sends none never connects — and again after a failed attempt. `close` closes it if
 * it was opened.
 */
export function aofRouterOf(flags: StoreFlags, io: Io): (AofRouter & { close(): Promise<void> }) | undefined {
  if (flags.nats === undefined && !io.env.TEA_NATS_URL) {
    strayNatsFlag(flags)
    return undefined
  }
  let opened: Promise<TaskStore> | undefined
  return {
    async route(message) {
      const [{ routeOn }, { storeOf }] = await Promise.all([import('../aof/roles/router.ts'), import('./aof-store.ts')])
      opened ??= storeOf(flags, io).catch((e: unknown) => {
        opened = undefined
        throw e
      })
      return routeOn(await opened, message)
    },
    async close() {
      const store = await opened?.catch(() => undefined)
      await store?.close()
    },
  }
}
