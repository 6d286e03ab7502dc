/**
 * What `tea serve` does (its definition, flags and help are in commands/serve.ts): take the data dir's one
 * daemon lock, open the store, resume what was left unfinished, serve the API, and on SIGTERM/SIGINT stop every
 * run after its current checkpoint, close the store and exit 0.
 */

import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { builtin } from '../core/builtin.ts'
import { TeaError } from '../core/errors.ts'
import { markServeListener } from '../core/http-policy.ts'
import { lazyRegistry } from '../catalog.ts'
import { dataDirOf } from './data-dir.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { openStore } from './run-output.ts'
import { createApp } from './serve/app.ts'
import { DEFAULT_RESUME_LIMIT } from './serve/auto-resume.ts'
import { readServeConfig } from './serve/config.ts'
import { notifySettings } from './serve/notify.ts'
import { tokenMatcher } from './serve/http-kit.ts'
import { DEFAULT_LISTEN, parseListen, readToken, requireTokenOffLoopback } from './serve/listen.ts'
import { takeServeLock } from './serve/lock.ts'
import { checkAllowHosts, requestGuard } from './serve/request-guard.ts'
import { RunManager } from './serve/run-manager.ts'

export interface ServeFlags {
  'data-dir'?: string
  agents?: string
  listen?: string
  'token-file'?: string
  'max-concurrent'?: number
  'min-free-mb'?: number
  'no-resume': boolean
  config?: string
  'print-systemd': boolean
  'allow-host': string[]
  'resume-limit'?: number
  replay?: string
}

const BODY_LIMIT = 1 << 20

export async function serveCommand({ flags }: { flags: ServeFlags }, io: Io): Promise<number> {
  const config = flags.config ? readServeConfig(resolve(io.cwd, flags.config)) : undefined
  const base = config ? config.dir : io.cwd
  const dataDir = dataDirOf(flags['data-dir'] ?? (config?.data_dir && resolve(base, config.data_dir)), io)
  const agentsDir = resolve(flags.agents ? io.cwd : base, flags.agents ?? config?.agents ?? 'agents')
  const listenText = flags.listen ?? config?.listen ?? DEFAULT_LISTEN
  const address = parseListen(listenText)
  const tokenFile = flags['token-file'] ?? (config?.token_file && resolve(base, config.token_file))
  const token = tokenFile ? readToken(resolve(io.cwd, tokenFile)) : undefined
  requireTokenOffLoopback(address, token)
  const maxConcurrent = flags['max-concurrent'] ?? config?.max_concurrent ?? 2
  const minFreeMb = flags['min-free-mb'] ?? config?.min_free_mb ?? 128
  const allowHosts = [...(config?.allow_hosts ?? []), ...(flags['allow-host'] ?? [])]
  const resumeLimit = flags['resume-limit'] ?? config?.resume_limit ?? DEFAULT_RESUME_LIMIT
  checkAllowHosts(allowHosts)
  const replay = flags.replay === undefined ? undefined : resolve(io.cwd, flags.replay)
  if (flags['print-systemd']) {
    const { systemdUnit } = await import('./serve/systemd.ts')
    io.out(
      systemdUnit({
        io,
        dataDir,
        agentsDir,
        listen: listenText,
        maxConcurrent,
        resumeLimit,
        // systemd's quoting of a path with spaces is JSON's: double quotes, backslash escapes.
        flags: [...serveFlagArgs(flags), ...(replay ? [`--replay ${/\s/.test(replay) ? JSON.stringify(replay) : replay}`] : [])],
        ...(tokenFile && { tokenFile: resolve(io.cwd, tokenFile) }),
        ...(flags.config && { config: resolve(io.cwd, flags.config) }),
      }),
    )
    return EXIT.ok
  }

  const schedulesModule = config?.schedules.length ? await import('./serve/schedules.ts') : undefined
  // The MQTT client is loaded only for a config that names a broker.
  const mqttModule = config?.mqtt ? await import('./serve/mqtt-triggers.ts') : undefined
  schedulesModule?.checkSchedules(config!.schedules) // a bad expression is a start-up error, before anything is taken
  const notify = config?.notify && notifySettings(config.notify, config.dir) // its token file read now, likewise
  // A cassette that cannot be read or parsed is a start-up error too, not every run's.
  if (replay) (await import('../llm/cassette.ts')).readCassette(replay)
  const lock = takeServeLock(dataDir, listenText)
  const log = (line: string) => io.err(`${new Date().toISOString()} ${line}\n`)
  // Listened for from the start: a service manager may stop tea while it is still starting.
  const stopRequested = new Promise<void>((done) => {
    let signals = 0
    const onSignal = (name: NodeJS.Signals): void => {
      if (++signals > 1) process.exit(EXIT.signal) // a second signal means now
      log(`${name}: stopping runs after their current checkpoint…`)
      done()
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
  const store = await openStore(dataDir).catch((e: unknown) => {
    lock.release()
    throw e
  })
  const registry = lazyRegistry() // the actions each agent names load with its first run (src/catalog.ts)
  let mqtt: import('./serve/mqtt-triggers.ts').MqttService | undefined
  const manager = new RunManager({
    store,
    registry,
    dataDir,
    io,
    maxConcurrent,
    minFreeBytes: minFreeMb * 2 ** 20,
    resumeLimit,
    log,
    ...(config?.mqtt && mqttModule && { sections: { mqtt: mqttModule.brokerForAgents(config.mqtt, config.dir) } }),
    onEnded: (runId, agent, status) => mqtt?.ended(runId, agent, status),
    ...(replay && { replay }),
    ...(notify && { notify }),
  })
  // Made once the port is known (a listener on port 0 learns it from the kernel); no request arrives before.
  let guard: ((req: IncomingMessage) => void) | undefined
  const app = createApp({
    guard: (req) => guard!(req),
    store,
    dataDir,
    registry,
    manager,
    agentsDir,
    bodyLimit: BODY_LIMIT,
    ...(token && { checkToken: tokenMatcher(token) }),
  })
  // Listening loads dns, then (after the address lookup) cluster with child_process and dgram: loaded here first,
  // they come from Node's code cache (src/core/builtin.ts), not compiled from source under the executables' flags.
  for (const id of ['node:dns', 'node:cluster'] as const) builtin(id)
  const server = createServer(app)
  // Slow or stuck clients must not hold sockets for ever; SSE streams are long by design and exempt.
  server.requestTimeout = 30_000
  server.headersTimeout = 10_000
  try {
    await new Promise<void>((done, fail) => {
      server.once('error', fail)
      server.listen(address.port, address.host, () => done())
    })
  } catch (e) {
    await store.close()
    lock.release()
    const code = (e as NodeJS.ErrnoException).code
    throw new TeaError('USAGE', `cannot listen on ${listenText}: ${code ?? e}`, {
      hint: code === 'EADDRINUSE' ? 'another program uses that port: give --listen HOST:OTHERPORT' : undefined,
    })
  }
  const bound = server.address() as AddressInfo
  markServeListener(bound.address, bound.port) // agents' outbound HTTP never reaches it (core/http-policy.ts)
  guard = requestGuard({ port: bound.port, listenHost: address.host, allowHosts })
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address
  manager.listening(`http://${host}:${bound.port}`) // the link of a pause notification when the config gives no page_url
  log(`tea serve: listening on http://${host}:${bound.port} (data dir ${dataDir}, agents ${agentsDir}${token ? ', token required' : ''})`)
  if (replay) log(`tea serve: replaying model replies from ${replay} (no model server is contacted)`)

  if (!flags['no-resume']) {
    const resumed = await manager.resumeLeftovers()
    if (resumed.length) log(`resuming ${resumed.length} unfinished run${resumed.length === 1 ? '' : 's'}: ${resumed.join(', ')}`)
  }
  // After the resumes: runs a power cut interrupted go first in the queue, before missed schedules.
  const schedules = schedulesModule?.startSchedules(config!.schedules, { manager, registry, agentsDir, dataDir, log })
  if (config?.mqtt && mqttModule)
    mqtt = await mqttModule.startMqtt(config.mqtt, config.triggers, { manager, registry, store, agentsDir, dataDir, base: config.dir, log })

  await stopRequested
  schedules?.stop()
  server.close()
  await mqtt?.stop() // before the runs stop: a message that arrives now is not acknowledged, and comes again
  const stopped = await manager.shutdown()
  server.closeAllConnections()
  await store.close()
  lock.release()
  log(`tea serve: stopped${stopped.length ? `; ${stopped.join(', ')} will resume at the next start` : ''}`)
  return EXIT.ok
}

/** The flags the unit's ExecStart repeats besides its paths: what the command line set and the config did not. */
function serveFlagArgs(flags: ServeFlags): string[] {
  return [
    ...(flags['max-concurrent'] !== undefined ? [`--max-concurrent ${flags['max-concurrent']}`] : []),
    ...(flags['min-free-mb'] !== undefined ? [`--min-free-mb ${flags['min-free-mb']}`] : []),
    ...(flags['resume-limit'] !== undefined ? [`--resume-limit ${flags['resume-limit']}`] : []),
    ...(flags['allow-host'] ?? []).map((h) => `--allow-host ${h}`),
    ...(flags['no-resume'] ? ['--no-resume'] : []),
  ]
}
