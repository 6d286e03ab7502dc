/**
 * Issue 31 item 7: docs/tutorial.md's commands that can run here run as written, in order, in one bash session
 * (doc-commands.ts) in a fresh folder standing for the Pi user's home, `tea` being the built bundle (on the Pi,
 * the installed executable) and Ollama the fake model server. The marked blocks are the ones that run: ```sh test
 * (each line must exit as its comment says and print the JSON its comment quotes) and ```yaml file=PATH (written to
 * PATH, as the reader saves it). A marked line this file does not know fails the test, so the two change together.
 * Blocks without a mark need a Pi, root or the internet (installing Ollama, building and copying the executable,
 * systemctl), and are not run. `tea serve` listens on a free loopback port (`--listen 127.0.0.1:0` added, and the
 * lines after it say that port for 8765).
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { commandMissing, skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'
import { BUNDLE, bundleEnv, ROOT } from './cli.ts'
import { type DocLine, fencedBlocks, promised, Shell, shellLines, squeeze } from './doc-commands.ts'

const TUTORIAL = join(ROOT, 'docs/tutorial.md')
const json = (text: string): any => JSON.parse(text)

/** Every marked block of the tutorial, in order. */
function markedSteps(): Array<{ sh: DocLine[] } | { file: string; text: string }> {
  const steps: Array<{ sh: DocLine[] } | { file: string; text: string }> = []
  for (const b of fencedBlocks(readFileSync(TUTORIAL, 'utf8'))) {
    if (b.info === 'sh test') steps.push({ sh: shellLines(b.text) })
    const file = /^yaml file=(\S+)$/.exec(b.info)?.[1]
    if (file) steps.push({ file, text: `${b.text}\n` })
  }
  return steps
}

skipIf(
  test,
  commandMissing('curl', ['--version'], 'apt-get install curl'),
  "issue 31 item 7: docs/tutorial.md's marked commands run as written",
  async () => {
    const home = tempDir('tea-tutorial-')
    const model = await startFakeModelServer({ models: ['qwen2.5:1.5b'] })
    model.script({
      match: 'For how many minutes',
      repeat: true,
      content: { minutes: 6, reason: '12 % is far below the 30 % a bed needs.' },
    })
    const shell = new Shell(home, bundleEnv({ OLLAMA_HOST: model.url, OPENAI_BASE_URL: undefined }))
    const ran: string[] = []
    let port: number | undefined
    let file = ''
    try {
      await shell.run(`alias tea="node ${BUNDLE}"`) // on the Pi: /usr/local/bin/tea
      for (const step of markedSteps()) {
        if ('file' in step) {
          mkdirSync(dirname(join(home, step.file)), { recursive: true })
          writeFileSync(join(home, step.file), step.text)
          file = step.text
          continue
        }
        for (const line of step.sh) {
          const c = line.command
          ran.push(c)
          if (c === 'tea serve --config serve.yaml &') {
            const before = shell.stderr().length
            assert.is((await shell.run('tea serve --config serve.yaml --listen 127.0.0.1:0 &')).code, 0)
            port = Number((await shell.waitErr(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 30_000, before))[1])
            assert.match(shell.stderr().slice(before), /token required/)
            continue
          }
          const r = await shell.run(port === undefined ? c : c.replaceAll('localhost:8765', `localhost:${port}`))
          const { exit, fragments } = promised(line.comment)
          assert.is(r.code, exit, `'${line.text}' exited ${r.code}, not ${exit}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`)
          for (const f of fragments) assert.ok(squeeze(r.stdout).includes(squeeze(f)), `'${line.text}' printed no ${f}:\n${r.stdout}`)

          if (c === 'tea --version') assert.match(r.stdout, /^tea \d+\.\d+\.\d+ \(linux-x64; features: .*; node v\d+/)
          else if (c === 'tea doctor') {
            assert.match(r.stdout, '✓ model server')
            assert.not.match(r.stdout, '✗')
          } else if (c === 'mkdir -p agents') continue
          else if (c === 'tea validate agents/water.yaml')
            assert.is(
              r.stdout,
              "OK agents/water.yaml: agent 'water', 1 node, 0 edges\n  run: check: javascript (no body in the file is anything else)\n",
            )
          else if (c === 'tea run agents/water.yaml' && !file.includes('advise'))
            assert.equal(json(r.stdout), { bed: 3, moisture: 12, dry: true })
          else if (c === 'tea run agents/water.yaml --set moisture=45') assert.equal(json(r.stdout), { bed: 3, moisture: 45, dry: false })
          else if (c === 'tea run agents/water.yaml') {
            assert.equal(json(r.stdout), { bed: 3, moisture: 12, dry: true, minutes: 6, reason: '12 % is far below the 30 % a bed needs.' })
            assert.match(model.chatRequests().at(-1)!.body.messages.at(-1).content, 'Bed 3 has 12 % soil moisture.')
          } else if (c === 'tea graph agents/water.yaml') {
            assert.match(r.stdout, /^flowchart TD\n/)
            assert.match(r.stdout, 'check -->|"not state.dry"| __end__')
          } else if (c === 'tea run agents/water.yaml --run-id first') {
            assert.is(json(r.stdout).minutes, 6)
            assert.match(r.stderr, "paused before node 'open_valve'. Continue with: tea resume first")
          } else if (c === 'tea runs') assert.match(r.stdout, /^first\s+interrupted\s+water\s+open_valve/m)
          else if (c === 'tea resume first --set approved=true') assert.equal([json(r.stdout).approved, json(r.stdout).watered], [true, 6])
          else if (c === 'head -c 24 /dev/urandom | base64 > token && chmod 600 token')
            assert.match(readFileSync(join(home, 'token'), 'utf8'), /^[A-Za-z0-9+/=]{32}\n$/)
          else if (c.includes('/api/runs/by-curl/events') && !ran.some((x) => x.includes('/resume'))) {
            assert.match(r.stdout, /"type":"interrupt","node":"open_valve"/)
          } else if (c.includes('/api/runs/by-curl/events')) assert.match(r.stdout, /"type":"complete","state":\{.*"watered":6/)
          else if (c.startsWith('curl -s -H "Authorization: Bearer $(cat token)"')) assert.is(json(r.stdout).run_id, 'by-curl')
          else if (c === 'kill %1') {
            assert.is((await shell.run('wait %1')).code, 0, 'tea serve exits 0 on SIGTERM')
            port = undefined
          } else if (c === 'tea serve --config serve.yaml --print-systemd > tea.service') continue
          else if (c === 'cat tea.service') {
            const exec = /^ExecStart=(.*)$/m.exec(r.stdout)?.[1] ?? ''
            assert.ok(
              exec.endsWith(
                `serve --data-dir ${home}/.tea --agents ${home}/agents --listen 0.0.0.0:8765 --token-file ${home}/token --config ${home}/serve.yaml`,
              ),
              exec,
            )
            assert.match(r.stdout, `WorkingDirectory=${home}\n`)
            assert.match(r.stdout, /^After=network-online\.target ollama\.service$/m)
          } else if (c.startsWith('echo "http://$(hostname).local:8765/#token=')) {
            const token = readFileSync(join(home, 'token'), 'utf8').trim()
            assert.is(r.stdout, `http://${(await shell.run('hostname')).stdout.trim()}.local:8765/#token=${token}\n`)
          } else assert.unreachable(`docs/tutorial.md has a marked line this test does not know: ${line.text}`)
        }
      }
      // Every part of the walk that can run here ran: the agent's three steps, the daemon, its unit, the phone's link.
      assert.ok(ran.includes('tea resume first --set approved=true'))
      assert.ok(ran.includes('cat tea.service'))
      assert.ok(ran.some((c) => c.startsWith('echo "http://')))
    } finally {
      await shell.close()
      await model.close()
    }
  },
)

test.run()
