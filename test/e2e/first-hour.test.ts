/**
 * Issue 31 item 6, the first hour offline: the README's "Thirty seconds" runs as written on a fresh clone with no
 * model server. Its shell lines run one by one in one bash session (doc-commands.ts), in a fresh copy of the
 * examples with `dist/` beside them, with OLLAMA_HOST on a closed port: each line must exit as its comment says
 * (`exit N`, else 0), print the JSON its comment quotes, and do what this file checks for it (a line the file does
 * not know fails the test, so the README and this file change together). Then the block for a machine with Ollama
 * runs against the fake model server, and examples/README.md's blocks (react-tools with its page, the approval).
 *
 * Where the session differs from a reader's terminal, and why:
 * - `npm run build` is not run again: npm test built dist/ before the suites, and a rebuild under the other suites
 *   would swap the bundle they run. The bundle it makes must be there.
 * - `tea serve` listens on a free port (`--listen 127.0.0.1:0` added), and the lines after it say that port for
 *   8765: two test files never fight over a port, nor a test over a reader's daemon.
 * - `ollama pull` is not run (there is no Ollama here): the fake model server lists the model as pulled.
 */

import { cpSync, existsSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { commandMissing, skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'
import { BUNDLE, bundleEnv, ROOT } from './cli.ts'
import { codeBlocks, type DocLine, docSection, type LineResult, promised, Shell, squeeze } from './doc-commands.ts'

const curlMissing = commandMissing('curl', ['--version'], 'apt-get install curl')

/** A fresh clone as far as the README's commands reach: the examples, and dist/ built (symlinks to this checkout's). */
function freshClone(): string {
  const dir = tempDir('tea-first-hour-')
  // An example's workspace output (react-tools' out/) is not part of a clone.
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true, filter: (src) => !/\/out$/.test(src) })
  for (const name of ['dist', 'node_modules', 'scripts', 'package.json']) symlinkSync(join(ROOT, name), join(dir, name))
  return dir
}

/** Runs a README line in the session and holds it to what its comment promises. */
async function runLine(shell: Shell, line: DocLine, port?: number): Promise<LineResult> {
  const command = port === undefined ? line.command : line.command.replaceAll('localhost:8765', `localhost:${port}`)
  const r = await shell.run(command)
  const { exit, fragments } = promised(line.comment)
  assert.is(r.code, exit, `'${line.text}' exited ${r.code}, not ${exit}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`)
  for (const f of fragments) assert.ok(squeeze(r.stdout).includes(squeeze(f)), `'${line.text}' printed no ${f}:\n${r.stdout}`)
  return r
}

/** Starts a `tea serve … &` line on a free port; resolves with that port once it listens. */
async function startServeLine(shell: Shell, line: DocLine): Promise<number> {
  assert.match(line.command, / &$/, 'a tea serve line in the README runs it in the background')
  const before = shell.stderr().length
  const r = await shell.run(line.command.replace(/ &$/, ' --listen 127.0.0.1:0 &'))
  assert.is(r.code, 0)
  const listening = await shell.waitErr(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 30_000, before)
  return Number(listening[1])
}

const json = (text: string): any => JSON.parse(text)

skipIf(test, curlMissing, "issue 31 item 6: every command of the README's Thirty seconds runs offline as written", async () => {
  assert.ok(existsSync(BUNDLE), `${BUNDLE} is what 'npm run build' makes (npm test builds it first)`)
  const [offline, withOllama] = codeBlocks(docSection(join(ROOT, 'README.md'), 'Thirty seconds'), 'sh')
  assert.ok(offline && withOllama, 'the section has two shell blocks: offline, and with Ollama')
  const clone = freshClone()
  const shell = new Shell(clone, bundleEnv({ OPENAI_BASE_URL: undefined }))
  const model = await startFakeModelServer({ models: ['qwen2.5:1.5b'] })
  let port: number | undefined
  let taskId = ''
  try {
    for (const line of offline) {
      const c = line.command
      if (c === 'npm run build') continue // see the header: built by npm test, checked above
      if (c.startsWith('tea serve ')) {
        port = await startServeLine(shell, line)
        await shell.waitErr(/replaying model replies from \S+hello\/cassette\.jsonl \(no model server is contacted\)/)
        continue
      }
      const r = await runLine(shell, line, port)
      if (c.startsWith('alias tea=')) continue
      if (c === 'tea validate examples/triage/agent.yaml')
        assert.match(r.stdout, /^OK examples\/triage\/agent\.yaml: agent 'triage', 4 nodes/)
      else if (c === 'tea run examples/triage/agent.yaml --replay examples/triage/cassette.jsonl') {
        assert.equal([json(r.stdout).label, json(r.stdout).queue], ['bug', 'engineering'])
        assert.match(r.stderr, 'tea: replaying model replies from examples/triage/cassette.jsonl (no model server is contacted)')
      } else if (c === 'tea runs') {
        assert.match(r.stdout, /completed\s+triage\s+file_bug/)
        assert.ok(existsSync(join(clone, '.tea')), 'the runs are checkpointed in ./.tea')
      } else if (c === 'tea graph examples/triage/agent.yaml')
        assert.match(
          r.stdout,
          /^flowchart TD\n[\s\S]*classify -->\|"result\.parsed\.confidence >= 0\.7 and result\.parsed\.label == 'bug'"\| file_bug/,
        )
      else if (c.startsWith('tea run examples/approval/agent.yaml --run-id water-1')) {
        assert.is(json(r.stdout).proposal.action, 'water bed 3')
        // The pause names the command that goes on, offline too.
        assert.match(r.stderr, "paused before node 'act'. Continue with: tea resume water-1 --replay examples/approval/cassette.jsonl")
      } else if (c.startsWith('tea resume water-1 --set approved=true')) {
        assert.equal([json(r.stdout).approved, json(r.stdout).log], [true, 'Bed 3: watered for 5 minutes (soil moisture was 12 %).'])
        assert.match(r.stderr, /✓ act[\s\S]*✓ log/)
        assert.not.match(r.stderr, '✓ propose', 'the recorded node does not run again')
      } else if (c.startsWith('tea aof task create')) {
        assert.match(r.stdout, /^TASK-\d{4}-\d\d-\d\d-\w+\n$/)
        taskId = r.stdout.trim()
      } else if (c.startsWith('tea worker --agent-id pump-1')) {
        assert.equal([json(r.stdout).taskId, json(r.stdout).outcome], [taskId, 'done'])
      } else if (c.startsWith('curl -s localhost:8765/api/runs --json')) {
        assert.ok(['running', 'queued'].includes(json(r.stdout).status), r.stdout)
      } else if (c === 'curl -sN localhost:8765/api/runs/hello-1/events') {
        const events = r.stdout
          .split('\n\n')
          .filter((f) => f.startsWith('data: '))
          .map((f) => json(f.slice(6)))
        assert.equal(
          events.map((e) => e.type),
          ['start', 'node_start', 'node_end', 'complete'],
        )
        assert.is(events[3].state.greeting, 'Hello, world! It is lovely to meet you.')
      } else if (c === 'kill %1') {
        const ended = await shell.run('wait %1')
        assert.is(ended.code, 0, 'tea serve exits 0 on SIGTERM')
        assert.match(shell.stderr(), /tea serve: stopped/)
        port = undefined
      } else assert.unreachable(`the README's Thirty seconds has a line this test does not know: ${line.text}`)
    }

    // With Ollama: the fake model server stands in for it.
    await shell.run(`export OLLAMA_HOST=${model.url}`)
    model.script(
      { match: 'How do I export?', content: { label: 'question', confidence: 0.9 } },
      { match: 'Answer this support question', content: 'Use Export in the report menu. It writes a CSV file.' },
    )
    for (const line of withOllama) {
      const c = line.command
      if (c === 'ollama pull qwen2.5:1.5b') continue // see the header
      if (c === 'tea serve --agents examples &') {
        port = await startServeLine(shell, line)
        model.script({ match: 'Say hello to Ada', content: 'Hello, Ada!' })
        const started = await shell.run(`curl -s localhost:${port}/api/runs --json '{"agent": "hello/agent", "input": {"name": "Ada"}}'`)
        const runId = json(started.stdout).run_id
        const events = await shell.run(`curl -sN localhost:${port}/api/runs/${runId}/events`)
        assert.match(squeeze(events.stdout), '"type":"complete","state":{"name":"Ada","greeting":"Hello,Ada!"}')
        assert.is((await shell.run('kill %1; wait %1')).code, 0)
        continue
      }
      const r = await runLine(shell, line)
      if (c === 'tea doctor examples/triage/agent.yaml') {
        assert.match(r.stdout, `✓ model server`)
        assert.match(r.stdout, `✓ models pulled`)
      } else if (c.startsWith(`tea run examples/triage/agent.yaml -i '{"ticket": "How do I export?"}'`)) {
        assert.equal([json(r.stdout).label, json(r.stdout).queue], ['question', 'answered'])
      } else assert.unreachable(`the README's block for Ollama has a line this test does not know: ${line.text}`)
    }
    assert.is(model.pending(), 0, 'every scripted reply was asked for')
  } finally {
    await shell.close()
    await model.close()
  }
})

test("issue 31 item 6: examples/README.md's commands run as written (react-tools with its page, the approval)", async () => {
  const blocks = codeBlocks(docSection(join(ROOT, 'examples/README.md'), 'Examples'), 'sh')
  assert.is(blocks.length, 2)
  const clone = freshClone()
  const shell = new Shell(clone, bundleEnv())
  try {
    await shell.run(`alias tea="node ${BUNDLE}"`)
    for (const line of blocks.flat()) {
      if (line.command === 'node examples/react-tools/serve-site.mjs &') {
        await shell.run(line.command)
        // The page's port is fixed (its address is in the cassette): another test may hold it for a while.
        await shell.waitErr(/serving examples\/react-tools\/site on http:\/\/127\.0\.0\.1:47831\//, 90_000)
        continue
      }
      const r = await runLine(shell, line)
      if (line.command.startsWith('tea run examples/react-tools/agent.yaml'))
        assert.equal(json(r.stdout).tools_used, ['web.scrape', 'memory.store', 'file.write', 'finish'])
      else if (line.command === 'kill %1') assert.is((await shell.run('wait %1')).code, 0, 'the page server ends on SIGTERM with 0')
      else if (line.command.startsWith('tea run examples/approval/agent.yaml')) assert.is(json(r.stdout).proposal.minutes, 5)
      else if (line.command.startsWith('tea resume water-1')) assert.is(json(r.stdout).done, 'water bed 3 for 5 minutes')
      else assert.unreachable(`examples/README.md has a line this test does not know: ${line.text}`)
    }
    assert.ok(existsSync(join(clone, 'examples/react-tools/out/hours.md')), 'react-tools wrote its note')
  } finally {
    await shell.close()
  }
})

test.run()
