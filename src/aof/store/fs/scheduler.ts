/**
 * The filesystem's view of stale heartbeats (`checkStaleHeartbeats`, a read-only check): in-progress tasks whose
 * heartbeat file has expired. A heartbeat is stale when its `expiresAt` (else `lastHeartbeat + heartbeatTtlMs`) is
 * at or before now; a task without a heartbeat file is never listed. The scheduler's pass itself, which recovers
 * stale runs, is one on every store: `schedulerPass` in roles/scheduler-pass.ts (protocol/stale-run.ts has its rules).
 */

import { DEFAULT_HEARTBEAT_TTL_MS, heartbeatExpiry } from '../../protocol/lease.ts'
import type { StaleHeartbeat } from '../../protocol/poll-result.ts'
import { checkTtlMs } from '../../protocol/ttl.ts'
import type { AofContext } from './context.ts'
import { readHeartbeat } from './run-artifacts.ts'
import { idsIn } from './task-store.ts'

export function checkStaleHeartbeats(ctx: AofContext, ttlMs = DEFAULT_HEARTBEAT_TTL_MS): StaleHeartbeat[] {
  checkTtlMs('heartbeatTtlMs', ttlMs)
  const now = ctx.now().getTime()
  const out: StaleHeartbeat[] = []
  for (const id of idsIn(ctx, 'in-progress')) {
    const hb = readHeartbeat(ctx, id)
    if (!hb) continue
    const expiry = heartbeatExpiry(hb, ttlMs)
    if (expiry <= now) {
      out.push({ taskId: id, agentId: hb.agentId, ...(hb.runId ? { runId: hb.runId } : {}), expiresAt: new Date(expiry).toISOString() })
    }
  }
  return out
}
