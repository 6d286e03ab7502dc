/**
 * The serve config (`tea serve --config serve.yaml`): what the flags say, for a service whose unit should not
 * carry them all, plus the schedules. Paths in it are relative to the file. Flags given on the command line win.
 *
 *   agents: ./agents
 *   listen: 127.0.0.1:8765
 *   max_concurrent: 2
 *   allow_hosts: [board.lan]     # Host names the API answers besides loopback and the listen address
 *   resume_limit: 3              # a run whose process died is resumed this many times in a row at most
 *   schedules:
 *     - agent: report            # a name or a path in the agents folder
 *       cron: "0 7 * * *"        # minute hour day-of-month month day-of-week (croner; seconds optional)
 *       input: { place: garden }
 *       timezone: Europe/Berlin  # optional; the board's zone otherwise
 */

import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import * as v from 'valibot'
import { parseYamlValue } from '../../agent/parse.ts'
import { TeaError } from '../../core/errors.ts'
import { toIssues } from '../../core/issues.ts'

const Schedule = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.minLength(1))),
  agent: v.pipe(v.string(), v.minLength(1)),
  cron: v.pipe(v.string(), v.minLength(1)),
  input: v.optional(v.record(v.string(), v.unknown())),
  timezone: v.optional(v.string()),
})

const Config = v.strictObject({
  agents: v.optional(v.string()),
  data_dir: v.optional(v.string()),
  listen: v.optional(v.string()),
  token_file: v.optional(v.string()),
  max_concurrent: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))),
  min_free_mb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  allow_hosts: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
  resume_limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1000))),
  schedules: v.optional(v.array(Schedule), []),
})

export type ScheduleEntry = v.InferOutput<typeof Schedule>
export type ServeConfig = v.InferOutput<typeof Config> & { dir: string }

export function readServeConfig(file: string): ServeConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new TeaError('USAGE', `cannot read --config ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`)
  }
  let data: unknown
  try {
    data = parseYamlValue(text) ?? {}
  } catch (e) {
    throw new TeaError('USAGE', `${file} is not valid YAML: ${(e as Error).message}`)
  }
  const r = v.safeParse(Config, data)
  if (!r.success) throw new TeaError('USAGE', `${file} is not a valid serve config`, { issues: toIssues(r.issues), where: { file } })
  return { ...r.output, dir: dirname(file) }
}
