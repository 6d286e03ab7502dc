/**
 * A run as JSON, the one shape `tea runs --json` prints and `tea serve`'s API answers (`GET /api/runs`,
 * `GET /api/runs/:id` adds its own fields): snake_case as the API's bodies are (`run_id`, `input`), times as ISO 8601
 * (UTC). What only the store needs (the file's hash, the pid's start time, the run: languages) stays out.
 */

import type { RunRecord } from '../../store/types.ts'

export function runJson(r: RunRecord): Record<string, unknown> {
  return {
    run_id: r.id,
    agent: r.agent,
    status: r.status,
    node: r.node,
    step: r.step,
    created_at: new Date(r.createdAt).toISOString(),
    updated_at: new Date(r.updatedAt).toISOString(),
    ...(r.error && { error: r.error }),
    agent_path: r.agentPath,
    ...(r.status === 'running' && r.pid !== undefined && { pid: r.pid }),
    ...(r.autoResume && { auto_resume: { deaths: r.autoResume.deaths, step: r.autoResume.step, pid: r.autoResume.pid } }),
  }
}
