/**
 * `tea serve --print-systemd`: a unit for the flags given, to save as /etc/systemd/system/tea.service. It runs
 * as the user who printed it, from the directory it was printed in, after Ollama, restarts on failure, and is
 * hardened (read-only system, private /tmp, no new privileges) with write access to the data dir and the
 * cache dir only — tea writes nothing else.
 *
 * Memory: `MemoryMax=` caps the service so the kernel stops tea, not the model server, when tea grows. It is the
 * build's measured floor (docs/deploy.md: every example fits 160M, 224M with Python) plus one `run:` node's own
 * limit (`settings.run_memory_mb`, default 256 MiB) per concurrent run, so a node that overreaches ends as
 * NODE_MEMORY_LIMIT before the cgroup kills the whole service. Should the service die anyway, restarts are bounded
 * (`StartLimitBurst=` in [Unit]) above what auto-resume needs to give up on a run (`--resume-limit` + 1 restarts).
 */

import { userInfo } from 'node:os'
import { DEFAULT_RUN_MEMORY_MB } from '../../actions/types.ts'
import { enabledFeatures } from '../../feature-list.ts'
import { cacheDir } from '../../sea/cache-dir.ts'
import type { Io } from '../io.ts'

/** MiB every example needs at full speed, measured under cgroup limits (docs/deploy.md, bench/RESULTS.md). */
const FLOOR_MB = 160
const FLOOR_PYTHON_MB = 224
/** The window in which systemd counts restarts. */
const START_LIMIT_INTERVAL_S = 600

export interface UnitOptions {
  io: Io
  dataDir: string
  agentsDir: string
  listen: string
  /** Runs at once (`--max-concurrent`): each may hold one node's memory limit. */
  maxConcurrent: number
  /** `--resume-limit`: the restarts auto-resume may need before it fails a run that kills the service. */
  resumeLimit: number
  /** Further flags for ExecStart, already written (`--max-concurrent 3`). */
  flags?: readonly string[]
  tokenFile?: string
  config?: string
}

/** The unit's MemoryMax in MiB, and how it was reached (a comment in the unit). */
function memoryMax(maxConcurrent: number, features = enabledFeatures()): { mb: number; why: string } {
  const python = features.includes('python')
  const floor = python ? FLOOR_PYTHON_MB : FLOOR_MB
  const mb = floor + maxConcurrent * DEFAULT_RUN_MEMORY_MB
  return {
    mb,
    why: `${floor}M for this build${python ? ' (with Python)' : ''} + ${maxConcurrent} concurrent run${maxConcurrent === 1 ? '' : 's'} x ${DEFAULT_RUN_MEMORY_MB}M (settings.run_memory_mb)`,
  }
}

export function systemdUnit(o: UnitOptions): string {
  const user = safeUser()
  const cache = cacheDir(o.io.env)
  const exe =
    process.env.TEA_EXECUTABLE ?? (process.argv[1]?.endsWith('.cjs') ? `${process.execPath} ${process.argv[1]}` : process.execPath)
  const args = [
    'serve',
    `--data-dir ${quote(o.dataDir)}`,
    `--agents ${quote(o.agentsDir)}`,
    `--listen ${o.listen}`,
    ...(o.tokenFile ? [`--token-file ${quote(o.tokenFile)}`] : []),
    ...(o.config ? [`--config ${quote(o.config)}`] : []),
    ...(o.flags ?? []),
  ]
  const memory = memoryMax(o.maxConcurrent)
  return `[Unit]
Description=tea serve: YAML agents against the local model server
After=network-online.target ollama.service
Wants=network-online.target
# At most this many starts in ${START_LIMIT_INTERVAL_S} s, then systemd stops trying (systemctl reset-failed tea): more than
# auto-resume needs to fail a run that kills the service each time (--resume-limit ${o.resumeLimit}: ${o.resumeLimit + 1} restarts).
StartLimitIntervalSec=${START_LIMIT_INTERVAL_S}
StartLimitBurst=${o.resumeLimit + 3}

[Service]
Type=simple
User=${user}
WorkingDirectory=${o.io.cwd}
ExecStart=${exe} ${args.join(' ')}
Environment=OLLAMA_HOST=${o.io.env.OLLAMA_HOST ?? 'http://127.0.0.1:11434'}
Restart=on-failure
RestartSec=5
# SIGTERM: runs stop after their current checkpoint and resume at the next start.
KillSignal=SIGTERM
TimeoutStopSec=90
# ${memory.why}. Lower it with settings.run_memory_mb or --max-concurrent (docs/deploy.md).
MemoryMax=${memory.mb}M
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=read-only
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes
# '-': a cache dir not made yet is no error (tea makes it on first use).
ReadWritePaths=${quote(o.dataDir)} -${quote(cache)}

[Install]
WantedBy=multi-user.target
`
}

function safeUser(): string {
  try {
    return userInfo().username
  } catch {
    return 'tea'
  }
}

/** systemd's quoting: a path with spaces goes in double quotes. */
function quote(path: string): string {
  return /\s/.test(path) ? `"${path.replace(/(["\\])/g, '\\$1')}"` : path
}
