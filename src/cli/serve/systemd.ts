/**
 * `tea serve --print-systemd`: a unit for the flags given, to save as /etc/systemd/system/tea.service. It runs
 * as the user who printed it, from the directory it was printed in, after Ollama, restarts on failure, and is
 * hardened (read-only system, private /tmp, no new privileges) with write access to the data dir and the
 * cache dir only — tea writes nothing else.
 */

import { userInfo } from 'node:os'
import { cacheDir } from '../../sea/cache-dir.ts'
import type { Io } from '../io.ts'

export interface UnitOptions {
  io: Io
  dataDir: string
  agentsDir: string
  listen: string
  tokenFile?: string
  config?: string
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
  ]
  return `[Unit]
Description=tea serve: YAML agents against the local model server
After=network-online.target ollama.service
Wants=network-online.target

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
