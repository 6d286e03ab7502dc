import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.ts'
// @ts-expect-error plain JavaScript build script without type declarations
import { missingTools } from '../../scripts/build/qemu.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { hasSeaAssets } from '../../scripts/build/targets.mjs'
import { natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { opensslMissing, selfSignedCertificate } from '../support/openssl.ts'
import { skipIf } from '../support/skip.ts'
import { ensureSea, ROOT, runExe, SEA_REQUIRE_WARNING, targets, type RunResult } from './sea-harness.ts'
import { tempDir } from '../support/temp-dir.ts'

// Each target's single executable, on its own architecture (ARM through qemu): version, a checkpointed run
// against the fake model server, SIGKILL mid-run and resume. Building all four takes ~20 s on 2 cores (cached by
// the bundle's hash between runs); qemu runs take a few seconds each and say nothing about a real board's speed.
// TEA_SKIP_SEA=1 skips this file loudly (a machine without qemu); CI installs qemu (.ci/install-sea-deps.sh).

const AGENT = `name: two-steps
settings:
  llm:
    model: ollama:fake
    timeout: 120
    max_retries: 0
initial_state:
  topic: pumps
nodes:
  - name: first
    uses: llm.call
    with:
      prompt: "FIRST about {{ state.topic }}"
    output:
      one: "{{ result.content }}"
  - name: second
    uses: llm.call
    with:
      prompt: "SECOND after {{ state.one }}"
    output:
      two: "{{ result.content }}"
`

// run: code has no \`process\` (it runs in a vm context); the host's setTimeout leads back to the thread's own
// process object, whose tinypool marker shows which thread ran the subtask. Test-only: run: code is trusted.
const PLAN_AGENT = `name: plan-on-pool
settings:
  llm:
    model: ollama:fake
    max_retries: 0
nodes:
  - name: decompose
    uses: plan.decompose
    with:
      goal: "PLAN three checks"
  - name: execute
    uses: plan.execute
    with:
      max_concurrent: 2
      # Under qemu on a busy machine a worker's start alone can take longer than the 10 s default.
      timeout: 300
      subtask_executor:
        run: |
          const p = setTimeout.constructor('return process')()
          const t = p.__tinypool_state__
          return { id: subtask.id, inWorker: t !== undefined && t.isWorkerThread === true, deps: Object.keys(dependency_results).sort() }
`

const PLAN_REPLY = {
  subtasks: [
    { id: 'a', description: 'check A', dependencies: [] },
    { id: 'b', description: 'check B', dependencies: [] },
    { id: 'c', description: 'combine', dependencies: ['a', 'b'] },
  ],
}

/**
 * Why a noexec tmpfs cannot be mounted here, or false when it can: root in a VM or CI runner can. Without it the test
 * is reported skipped (a failure under CI); the noexec check is unit-tested too (test/sea/).
 */
function cannotMountNoexec(): string | false {
  if (process.getuid?.() !== 0) return 'mounting a noexec tmpfs needs root'
  const probe = tempDir('tea-mount-probe-')
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,size=1m', 'tmpfs', probe], { stdio: 'ignore' })
    execFileSync('umount', [probe], { stdio: 'ignore' })
    return false
  } catch {
    return 'cannot mount a tmpfs here'
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}

function noWarnings(r: RunResult, what: string): void {
  assert.not.match(r.stderr, SEA_REQUIRE_WARNING, `${what}: the SEA required a non-built-in module`)
  assert.not.match(r.stderr, 'ExperimentalWarning', `${what}: experimental warning printed`)
}

/**
 * Preload lines (for NODE_OPTIONS) defining `readCacheUsage()`: which of Node's built-in modules this thread
 * compiled with Node's own code cache and which without it (Node's internal `getCacheUsage()`, reached through the
 * internal binding the executables expose).
 */
const READ_CACHE_USAGE = [
  'const readCacheUsage = () => {',
  '  const warn = process.emitWarning',
  '  process.emitWarning = () => {}',
  "  const { internalBinding } = require('internal/test/binding')",
  '  process.emitWarning = warn',
  "  const u = internalBinding('builtins').getCacheUsage()",
  '  return { with: [...u.compiledWithCache], without: [...u.compiledWithoutCache] }',
  '}',
]

/** A preload that writes the main thread's cache usage (READ_CACHE_USAGE) at exit, and a way to read it. */
function cacheUsage(dir: string, name: string): { preload: string; read(): { with: string[]; without: string[] } } {
  const preload = join(dir, `${name}-cache-usage.cjs`)
  const usage = join(dir, `${name}-cache-usage.json`)
  const write = `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(usage)}, JSON.stringify(readCacheUsage())))`
  writeFileSync(preload, [...READ_CACHE_USAGE, write, ''].join('\n'))
  return { preload, read: () => JSON.parse(readFileSync(usage, 'utf8')) }
}

/**
 * Asserts that the process compiled each of `modules` from Node's code cache, and nothing without it but Node's SEA
 * start, the flag switch's own module and `alsoWithout`.
 */
function assertNodeCache(seen: { with: string[]; without: string[] }, modules: string[], alsoWithout: string[] = []): void {
  for (const m of modules) assert.ok(seen.with.includes(m), `${m} was not compiled from Node's cache: ${seen.without.join(', ')}`)
  assert.equal(seen.without.sort(), [...alsoWithout, 'internal/main/embedding', 'internal/test/binding'].sort())
}

function chatPrompts(server: FakeModelServer): string[] {
  return server.chatRequests().map((r) => JSON.stringify(r.body?.messages ?? r.body?.prompt ?? ''))
}

// A safety net for CI's time budget: nothing here should take more than a few minutes even on 2 busy cores.
const watchdog = setTimeout(() => {
  console.error('test/e2e/sea.test.ts: still running after 20 minutes; giving up')
  process.exit(1)
}, 20 * 60_000)
watchdog.unref()

// A target whose emulator or cross libraries are missing here is reported skipped (a failure under CI=true, which
// installs them); TEA_SKIP_SEA=1 skips every target the same way. TEA_SEA_TARGET=NAME runs that target alone
// (scripts/test.mjs runs each target in a process of its own, side by side).
const only = process.env.TEA_SEA_TARGET
const runnable = targets().filter((target) => {
  if (only && target.name !== only) return false
  const missing = process.env.TEA_SKIP_SEA === '1' ? ['TEA_SKIP_SEA=1'] : missingTools(target.arch)
  if (!missing.length) return true
  const t = suite(`sea ${target.name}`)
  skipIf(
    t,
    `${missing.join(', ')}; install with: bash .ci/install-sea-deps.sh`,
    `single executable for ${target.name} built and run`,
    () => {},
  )
  t.run()
  return false
})

for (const target of runnable) {
  const t = suite(`sea ${target.name}`)
  const ctx: { dir: string; exe: string; servers: FakeModelServer[] } = { dir: '', exe: '', servers: [] }
  // Every fake server a test starts is closed after the suite, whatever the test's outcome.
  const serve = async (): Promise<FakeModelServer> => {
    const server = await startFakeModelServer()
    ctx.servers.push(server)
    return server
  }
  const features = Object.entries(target.features)
    .filter(([, on]) => on)
    .map(([f]) => f)

  t.before(async () => {
    ctx.dir = tempDir(`tea-sea-${target.name}-`)
    ctx.exe = (await ensureSea(target.name)).file
  })
  t.after(async () => {
    await Promise.all(ctx.servers.map((server) => server.close()))
    rmSync(ctx.dir, { recursive: true, force: true })
  })

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    TEA_CACHE_DIR: join(ctx.dir, 'cache'),
    HOME: ctx.dir,
    ...extra,
  })

  t(`tea --version names ${target.name}, its features and Node ${target.node}`, async () => {
    const r = await runExe(target, ctx.exe, ['--version'], { env: env() })
    assert.is(r.code, 0, r.stderr)
    assert.is(r.stdout.trim(), `tea 0.1.0 (${target.name}; features: ${features.join(', ') || 'none'}; node v${target.node})`)
    assert.is(r.stderr, '')
    noWarnings(r, '--version')
  })

  // Node 20.11 (armv7) has no assets: its main script is the program itself, compiled with the SEA's own cache.
  if (hasSeaAssets(target)) {
    t('the program starts from the code cache the build made with this Node: V8 accepts it (issue 14)', async () => {
      const agent = join(ctx.dir, 'three.yaml')
      writeFileSync(
        agent,
        'name: three\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n  - name: b\n    run: "return { b: state.a + 1 }"\n',
      )
      const r = await runExe(target, ctx.exe, ['run', agent, '-q', '--data-dir', join(ctx.dir, 'cc-data')], {
        env: env({ TEA_TRACE_LOADER: '1' }),
      })
      assert.is(r.code, 0, r.stderr)
      // The buffer the cache was read into is given back once V8 has read it (~1.2 MiB of a short run's peak).
      assert.match(r.stderr, 'code cache used: executable; its buffer freed')
      assert.equal(JSON.parse(r.stdout), { a: 1, b: 2 })
    })

    // Natively only: a cut executable compiles its program function by function, which qemu makes slow; which
    // built-ins a start loads does not depend on the target.
    if (target.name === 'linux-x64') {
      t('an executable whose tail (program and code cache) was cut off still runs, from its tea.cjs asset', async () => {
        const cut = join(ctx.dir, 'tea-cut')
        copyFileSync(ctx.exe, cut)
        truncateSync(cut, statSync(cut).size - 4)
        const agent = join(ctx.dir, 'cut.yaml')
        writeFileSync(agent, 'name: cut\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n')
        const r = await runExe(target, cut, ['run', agent, '-q', '--data-dir', join(ctx.dir, 'cut-data')], {
          env: env({ TEA_TRACE_LOADER: '1' }),
        })
        assert.is(r.code, 0, r.stderr)
        assert.match(r.stderr, 'code cache absent: executable')
        assert.equal(JSON.parse(r.stdout), { a: 1 })
      })
      t('a short run loads no built-in it does not use: node:os and node:module stay unloaded (~1.5 ms of a start; issue 14)', async () => {
        const preload = join(ctx.dir, 'loaded.cjs')
        const list = join(ctx.dir, 'loaded.txt')
        writeFileSync(
          preload,
          `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')))\n`,
        )
        const agent = join(ctx.dir, 'builtins.yaml')
        writeFileSync(agent, 'name: builtins\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n  - name: b\n    run: "return { b: 2 }"\n')
        const r = await runExe(target, ctx.exe, ['run', agent, '-q', '--data-dir', join(ctx.dir, 'builtins-data')], {
          env: env({ NODE_OPTIONS: `--require ${preload}` }),
        })
        assert.is(r.code, 0, r.stderr)
        const loaded = readFileSync(list, 'utf8').split('\n')
        assert.ok(loaded.includes('NativeModule vm'), 'the list is not the one expected')
        assert.equal(
          loaded.filter((m) => m === 'NativeModule os' || m === 'NativeModule module'),
          [],
        )
      })
      // Under the executable's V8 flags, which V8 hashes into the stamp of code caches, Node rejected its own cache of
      // every built-in it loaded after its start: a first model call's node:http and streams took ~8 ms instead of
      // ~2.4 (a hello run 68 -> 56 ms). The loader switches V8's flags back while a built-in loads (issue 14).
      t("built-ins a run loads (node:vm, node:http and the streams of a model call) come from Node's code cache (issue 14)", async () => {
        const server = await serve()
        server.script({ content: 'Hello, Ada!' })
        const usage = cacheUsage(ctx.dir, 'model-call')
        const agent = join(ctx.dir, 'cache-usage.yaml')
        writeFileSync(
          agent,
          'name: hi\nsettings: { llm: { model: "ollama:tiny" } }\nnodes:\n  - name: greet\n    uses: llm.call\n    with: { prompt: hi }\n    output: { greeting: "{{ result.content }}" }\n',
        )
        const r = await runExe(target, ctx.exe, ['run', agent, '-q', '--data-dir', join(ctx.dir, 'cache-usage-data')], {
          env: env({ OLLAMA_HOST: server.url, NODE_OPTIONS: `--require ${usage.preload}` }),
        })
        assert.is(r.code, 0, r.stderr)
        assert.is(JSON.parse(r.stdout).greeting, 'Hello, Ada!')
        const seen = usage.read()
        // Node's own start (before any of tea's code runs) and the module that opens the switch stay as they were.
        assertNodeCache(seen, ['vm', 'http', 'net', 'internal/webstreams/readablestream', 'internal/abort_controller'])
      })
      // Built-ins our code and packages load on first use (scripts/build/plugins.mjs, lazyBuiltinsPlugin): tinypool's
      // worker threads, crypto, child_process. Loaded under the executables' flags they were compiled from
      // source, ~70 of Node's modules for a plan (examples 4-6 ms slower on x64); the scheduler's performance.now()
      // loaded ten more.
      if (target.name === 'linux-x64') {
        t(
          "a plan on the worker pool loads its built-ins (worker_threads, child_process, crypto) from Node's code cache (issue 14)",
          async () => {
            const usage = cacheUsage(ctx.dir, 'plan')
            const example = join(ROOT, 'examples', 'plan-breakfast')
            const argv = ['run', join(example, 'agent.yaml'), '--replay', join(example, 'cassette.jsonl'), '-q']
            const r = await runExe(target, ctx.exe, [...argv, '--data-dir', join(ctx.dir, 'plan-data')], {
              env: env({ NODE_OPTIONS: `--require ${usage.preload}` }),
            })
            assert.is(r.code, 0, r.stderr)
            const seen = usage.read()
            assertNodeCache(seen, ['worker_threads', 'internal/worker', 'child_process', 'crypto'])
          },
        )
      }
      // A reasoning trace timed its steps with performance.now(), whose global loads ten of Node's perf modules.
      if (target.name === 'linux-x64') {
        t("a ReAct step loads no built-in outside Node's code cache (issue 14)", async () => {
          const server = await serve()
          const finish = { thought: 'I know it.', action: 'finish', action_input: { answer: '42' } }
          server.script({ content: JSON.stringify(finish) })
          const agent = join(ctx.dir, 'react.yaml')
          writeFileSync(
            agent,
            'name: react\nsettings: { llm: { model: "ollama:tiny" } }\nnodes:\n  - name: think\n    uses: reason.react\n    with: { goal: "answer", tools: [] }\n    output: research\n',
          )
          const usage = cacheUsage(ctx.dir, 'react')
          const r = await runExe(target, ctx.exe, ['run', agent, '-q', '--data-dir', join(ctx.dir, 'react-data')], {
            env: env({ OLLAMA_HOST: server.url, NODE_OPTIONS: `--require ${usage.preload}` }),
          })
          assert.is(r.code, 0, r.stderr)
          assert.is(JSON.parse(r.stdout).research.final_answer, '42')
          assertNodeCache(usage.read(), [])
        })
      }
      // An https http.get goes over node:https (src/core/http.ts: under the destination policy every hop is made
      // there, not in Node's fetch), with tls under it, loaded at its first call: compiled from source under the
      // executables' flags it would cost a run ~15 ms (Node's fetch did: 99.6 ms instead of 81.8 on x64).
      if (target.name === 'linux-x64') {
        skipIf(t, opensslMissing(), "an https http.get loads node:https and tls from Node's code cache (issue 14)", async () => {
          const { key, cert } = selfSignedCertificate(ctx.dir, 'https')
          const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => {
            res.setHeader('content-type', 'application/json')
            res.end('{"ok":true}')
          })
          await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
          try {
            const port = (server.address() as AddressInfo).port
            const agent = join(ctx.dir, 'https.yaml')
            writeFileSync(
              agent,
              `name: https\nsettings: { http: { allow: ["127.0.0.1"] } }\nnodes:\n  - name: get\n    uses: http.get\n    with: { url: "https://127.0.0.1:${port}/" }\n    output: { status: "{{ result.status }}" }\n`,
            )
            const usage = cacheUsage(ctx.dir, 'https')
            const r = await runExe(target, ctx.exe, ['run', agent, '-q', '--data-dir', join(ctx.dir, 'https-data')], {
              env: env({ NODE_OPTIONS: `--require ${usage.preload}`, NODE_EXTRA_CA_CERTS: cert }),
            })
            assert.is(r.code, 0, r.stderr)
            assert.is(String(JSON.parse(r.stdout).status), '200')
            const seen = usage.read()
            assertNodeCache(seen, ['https', 'tls', 'internal/tls/wrap'])
          } finally {
            server.close()
          }
        })
      }
      // `tea serve` starts on a board's boot: its HTTP server and the modules listening loads (dns, cluster, dgram,
      // child_process) were compiled from source under the executables' flags (to listening 48.5 -> 40.1 ms on x64).
      if (target.name === 'linux-x64') {
        t("tea serve loads its built-ins (http, dns, cluster) from Node's code cache (issue 14)", async () => {
          const usage = cacheUsage(ctx.dir, 'serve')
          const agents = join(ctx.dir, 'serve-agents')
          mkdirSync(agents, { recursive: true })
          let asked = false
          let status = 0
          const r = await runExe(
            target,
            ctx.exe,
            ['serve', '--data-dir', join(ctx.dir, 'serve-data'), '--agents', agents, '--listen', '127.0.0.1:0'],
            {
              env: env({ NODE_OPTIONS: `--require ${usage.preload}` }),
              onStderr: (text, stop) => {
                const url = /listening on (http:\/\/\S+)/.exec(text)?.[1]
                if (!url || asked) return
                asked = true
                void fetch(`${url}/api/runs`)
                  .then(async (res) => {
                    status = res.status
                    await res.text()
                  })
                  .finally(stop)
              },
            },
          )
          assert.is(r.code, 0, r.stderr)
          assert.ok(asked, r.stderr)
          assert.is(status, 200)
          const seen = usage.read()
          assertNodeCache(seen, ['http', 'dns', 'cluster', 'child_process'])
        })
      }
      // Node loads ~110 of its modules into a new worker thread before any of tea's code runs there; under the
      // executables' flags each was compiled from source (~25 ms of a plan's or a Lua agent's run). The pool holds
      // V8's start flags while a worker starts (src/pool/pool.ts, startingWorkers).
      if (target.name === 'linux-x64') {
        t("a pool worker's own start loads Node's modules from Node's code cache (issue 14)", async () => {
          // The preload runs in the worker too; the subtask's run: code reaches its global through the host's Function.
          const preload = join(ctx.dir, 'worker-usage.cjs')
          writeFileSync(preload, [...READ_CACHE_USAGE, 'globalThis.__cacheUsage = readCacheUsage', ''].join('\n'))
          const agent = join(ctx.dir, 'worker-usage.yaml')
          writeFileSync(
            agent,
            [
              'name: worker-usage',
              'nodes:',
              '  - name: execute',
              '    uses: plan.execute',
              '    with:',
              '      plan: { subtasks: [{ id: a, description: first }] }',
              '      subtask_executor:',
              '        run: |',
              "          return { usage: setTimeout.constructor('return globalThis')().__cacheUsage() }",
              '',
            ].join('\n'),
          )
          const r = await runExe(target, ctx.exe, ['run', agent, '-q', '--data-dir', join(ctx.dir, 'worker-usage-data')], {
            env: env({ NODE_OPTIONS: `--require ${preload}` }),
          })
          assert.is(r.code, 0, r.stderr)
          const usage = JSON.parse(r.stdout).plan.subtasks[0].result.usage as { with: string[]; without: string[] }
          for (const m of ['internal/main/worker_thread', 'internal/bootstrap/node', 'internal/modules/cjs/loader', 'fs', 'buffer'])
            assert.ok(usage.with.includes(m), `${m} was not compiled from Node's cache in the worker: ${usage.without.join(', ')}`)
          // What the thread loads after it is online (tinypool's import of the program, the loader's vm and sea)
          // may come either way; before the hold, 112 of its 113 modules were compiled from source.
          assert.ok(usage.without.length <= 20, `${usage.without.length} compiled from source: ${usage.without.join(', ')}`)
        })
      }
      // The NATS client requires net, tls, dns and crypto when its module loads; left to it, they loaded under the
      // executables' flags and ~55 of Node's modules were compiled from source: a `tea aof --nats` command took
      // 74.5 ms instead of 65.4 on x64 (scripts/build/plugins.mjs, CACHED_BUILTINS).
      if (target.name === 'linux-x64') {
        skipIf(
          t,
          natsServerMissing(),
          "a NATS command's built-ins (net, tls, crypto and the streams under them) come from Node's code cache (issue 14)",
          async () => {
            const nats = await startNatsServer()
            try {
              const usage = cacheUsage(ctx.dir, 'nats')
              const r = await runExe(target, ctx.exe, ['aof', 'init', '--nats', nats.url], {
                env: env({ NODE_OPTIONS: `--require ${usage.preload}` }),
              })
              assert.is(r.code, 0, r.stderr)
              assert.match(r.stdout, 'KV buckets')
              const seen = usage.read()
              // web crypto's IDL helpers load at nuid's first random number, after the store has opened.
              assertNodeCache(
                seen,
                ['net', 'tls', 'dns', 'crypto', 'internal/tls/wrap', 'internal/streams/readable', 'internal/crypto/webcrypto'],
                ['internal/crypto/webidl'],
              )
            } finally {
              await nats.cleanup()
            }
          },
        )
      }
    }
  }

  t('tea run checkpoints into LMDB; SIGKILL during the second node; tea resume finishes without redoing the first', async () => {
    const server = await serve()
    const agent = join(ctx.dir, 'agent.yaml')
    writeFileSync(agent, AGENT)
    const data = join(ctx.dir, 'data')
    server.script({ match: 'FIRST', content: 'alpha' }, { match: 'SECOND', content: 'never sent', delayMs: 600_000 })
    // `node_end` is emitted once the node's checkpoint has committed (the engine pipelines checkpoints, so the
    // second model request may already be out before the first record is on disk): kill right after it.
    const firstDone = (out: string): boolean => out.split('\n').some((l) => l.includes('"node_end"') && l.includes('"node":"first"'))
    const first = await runExe(target, ctx.exe, ['run', agent, '--data-dir', data, '--run-id', 'r1', '--stream'], {
      env: env({ OLLAMA_HOST: server.url }),
      onStdout: (out, kill) => firstDone(out) && kill(),
    })
    assert.is(first.signal, 'SIGKILL', `expected to kill the run mid-way: ${first.stderr}`)
    noWarnings(first, 'run')
    await server.close()

    const again = await serve()
    again.script({ match: 'SECOND', content: 'beta' })
    const resumed = await runExe(target, ctx.exe, ['resume', 'r1', '--data-dir', data], { env: env({ OLLAMA_HOST: again.url }) })
    assert.is(resumed.code, 0, resumed.stderr)
    noWarnings(resumed, 'resume')
    const state = JSON.parse(resumed.stdout)
    assert.is(state.one, 'alpha')
    assert.is(state.two, 'beta')
    const prompts = chatPrompts(again)
    assert.is(prompts.length, 1, `resume must not redo the first node: ${prompts.join(' | ')}`)
    assert.match(prompts[0]!, 'SECOND after alpha')
  })

  if (target.arch === process.arch) {
    skipIf(
      t,
      cannotMountNoexec(),
      'a cache dir on a noexec mount stops with CACHE_DIR_UNUSABLE and says to set TEA_CACHE_DIR',
      async () => {
        const mnt = join(ctx.dir, 'noexec')
        mkdirSync(mnt)
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,size=16m', 'tmpfs', mnt])
        try {
          const agent = join(ROOT, 'examples', 'hello')
          const r = await runExe(
            target,
            ctx.exe,
            ['run', join(agent, 'agent.yaml'), '--replay', join(agent, 'cassette.jsonl'), '--data-dir', join(ctx.dir, 'nx-data'), '-q'],
            {
              env: env({ TEA_CACHE_DIR: join(mnt, 'cache') }),
            },
          )
          assert.is(r.code, 1, r.stderr)
          assert.match(r.stderr, 'mounted noexec')
          assert.match(r.stderr, 'CACHE_DIR_UNUSABLE')
          assert.match(r.stderr, 'set TEA_CACHE_DIR')
        } finally {
          execFileSync('umount', [mnt])
        }
      },
    )
  }

  if (features.includes('reasoning')) {
    t('a ReAct loop runs its tool and checks its reply schema inside the executable', async () => {
      const server = await serve()
      server.script(
        { content: { thought: 'parse', action: 'json.parse', action_input: { text: '{"n": 41}' } } },
        { content: { thought: 'done', action: 'finish', action_input: { answer: 42 } } },
      )
      const agent = join(ctx.dir, 'react.yaml')
      writeFileSync(
        agent,
        'name: r\nsettings:\n  llm: { model: "ollama:tiny" }\nnodes:\n  - name: think\n    uses: reason.react\n    with: { goal: g, tools: [json.parse] }\n    output: out\n',
      )
      const r = await runExe(target, ctx.exe, ['run', agent, '--data-dir', join(ctx.dir, 'react-data'), '-q'], {
        env: env({ OLLAMA_HOST: server.url }),
      })
      assert.is(r.code, 0, r.stderr)
      noWarnings(r, 'react')
      const out = JSON.parse(r.stdout).out
      assert.is(out.final_answer, 42)
      assert.match(out.steps[0].observation, '"n":41')
    })
  }

  if (features.includes('prolog')) {
    t('Prolog run: code runs on the engine carried inside the executable (issue 11: SEA assets, or bytes on Node 20.11)', async () => {
      const agent = join(ctx.dir, 'prolog.yaml')
      writeFileSync(
        agent,
        'name: p\nnodes:\n  - name: solve\n    language: prolog\n    run: |\n      state(n, N), X #= N * 6, return(answer, X).\n',
      )
      const r = await runExe(target, ctx.exe, ['run', agent, '--input', '{"n": 7}', '--data-dir', join(ctx.dir, 'prolog-data'), '-q'], {
        env: env({}),
      })
      assert.is(r.code, 0, r.stderr)
      noWarnings(r, 'prolog')
      assert.is(JSON.parse(r.stdout).answer, 42)
    })
  }

  if (features.includes('lua')) {
    t('Lua run: code runs on the engine carried inside the executable (issue 11)', async () => {
      const agent = join(ctx.dir, 'lua.yaml')
      writeFileSync(
        agent,
        'name: l\nnodes:\n  - name: solve\n    language: lua\n    run: "return { answer = state.n * 6, os = os == nil }"\n',
      )
      const r = await runExe(target, ctx.exe, ['run', agent, '--input', '{"n": 7}', '--data-dir', join(ctx.dir, 'lua-data'), '-q'], {
        env: env({}),
      })
      assert.is(r.code, 0, r.stderr)
      noWarnings(r, 'lua')
      assert.equal([JSON.parse(r.stdout).answer, JSON.parse(r.stdout).os], [42, true])
    })
  }

  if (features.includes('python')) {
    t('Python run: code runs on the interpreter and standard library carried inside the executable (issue 11)', async () => {
      const agent = join(ctx.dir, 'python.yaml')
      writeFileSync(
        agent,
        'name: p\nnodes:\n  - name: solve\n    language: python\n    run: |\n      import statistics\n      return {"answer": state["n"] * 6, "mean": statistics.mean([1, 2, 3])}\n',
      )
      // Under qemu the interpreter's start (compiling 9.6 MB of WebAssembly) takes minutes.
      const r = await runExe(target, ctx.exe, ['run', agent, '--input', '{"n": 7}', '--data-dir', join(ctx.dir, 'python-data'), '-q'], {
        env: env({}),
        timeoutMs: 900_000,
      })
      assert.is(r.code, 0, r.stderr)
      noWarnings(r, 'python')
      assert.equal([JSON.parse(r.stdout).answer, JSON.parse(r.stdout).mean], [42, 2])
    })
  }

  if (features.includes('planning')) {
    t('a plan runs its subtasks on the worker pool, started from the code carried in the executable', async () => {
      const server = await serve()
      server.script({ match: 'PLAN three checks', content: PLAN_REPLY })
      const agent = join(ctx.dir, 'plan.yaml')
      writeFileSync(agent, PLAN_AGENT)
      const r = await runExe(target, ctx.exe, ['run', agent, '--data-dir', join(ctx.dir, 'plan-data'), '-q'], {
        env: env({ OLLAMA_HOST: server.url }),
      })
      assert.is(r.code, 0, r.stderr)
      noWarnings(r, 'plan')
      const state = JSON.parse(r.stdout)
      assert.is(state.success, true, JSON.stringify(state.plan_error))
      assert.equal(Object.keys(state.subtask_results).sort(), ['a', 'b', 'c'])
      for (const id of ['a', 'b', 'c']) assert.is(state.subtask_results[id].inWorker, true, `subtask ${id} did not run in a pool worker`)
      assert.equal(state.subtask_results.c.deps, ['a', 'b'])
    })
  }

  t.run()
}
