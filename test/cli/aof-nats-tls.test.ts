/**
 * `--nats-tls-ca`, `--nats-tls-cert`, `--nats-tls-key` and `tls://` URLs against a real nats-server that requires
 * TLS and a client certificate (`verify: true`). The CA and both certificates are made for the test with openssl
 * (EC keys: fast), valid for 127.0.0.1 only, and removed with the temp dir.
 */

import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryIo } from '../../src/cli/io.ts'
import { main } from '../../src/cli/main.ts'
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.ts'
import { opensslMissing } from '../support/openssl.ts'
import { skipIf } from '../support/skip.ts'
import { tempDir } from '../support/temp-dir.ts'

const missing = natsServerMissing() ?? opensslMissing()
const dir = tempDir('tea-nats-tls-')
const file = (name: string) => join(dir, name)
let server: NatsServer | undefined

/** A CA, and a server and a client certificate signed by it. */
function makeCertificates(): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=tea test CA')
  for (const [name, ext] of [
    // The client checks the name localhost for 127.0.0.1, so the server certificate names both.
    ['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'],
    ['client', 'extendedKeyUsage=clientAuth\n'],
  ] as const) {
    writeFileSync(file(`${name}.ext`), ext)
    ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=tea ${name}`)
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    )
  }
}

async function tea(argv: string[]) {
  const io = memoryIo({ cwd: dir, env: { TEA_NATS_PROJECT: `tls${process.pid}` } })
  const code = await main(['aof', ...argv], io)
  return { code, out: io.stdout, err: io.stderr }
}

test.before(async () => {
  if (missing) return
  makeCertificates()
  const conf = file('tls.conf')
  writeFileSync(
    conf,
    `tls {\n  cert_file: "${file('server.pem')}"\n  key_file: "${file('server.key')}"\n  ca_file: "${file('ca.pem')}"\n  verify: true\n  timeout: 5\n}\n`,
  )
  server = await startNatsServer(['-c', conf])
})
test.after(async () => {
  await server?.cleanup()
  rmSync(dir, { recursive: true, force: true })
})

skipIf(test, missing, 'a tls:// URL with the CA, a client certificate and its key: tasks are created and listed', async () => {
  const url = `tls://127.0.0.1:${server!.port}`
  const tls = ['--nats-tls-ca', 'ca.pem', '--nats-tls-cert', 'client.pem', '--nats-tls-key', 'client.key']
  const created = await tea(['task', 'create', '--title', 'Over TLS', '--status', 'ready', '--nats', url, ...tls])
  assert.is(created.code, 0, created.err)
  const listed = await tea(['task', 'list', '--json', '--nats', `nats://127.0.0.1:${server!.port}`, ...tls])
  assert.is(listed.code, 0, listed.err)
  assert.equal(
    JSON.parse(listed.out).map((r: { id: string; title: string }) => [r.id, r.title]),
    [[created.out.trim(), 'Over TLS']],
  )
})

skipIf(
  test,
  missing,
  'without the client certificate, or without the CA, the connection is refused in one line naming the URL and the fix',
  async () => {
    const url = `tls://127.0.0.1:${server!.port}`
    // The server drops a connection without a client certificate silently: the client gives up at its timeout.
    const noCert = await tea(['task', 'list', '--nats', url, '--nats-tls-ca', 'ca.pem', '--nats-timeout-ms', '1500'])
    assert.is(noCert.code, 1)
    assert.is(
      noCert.err,
      `tea aof task list: NATS_CONNECT: cannot reach NATS at ${url}: timed out; if the server requires a client certificate, give --nats-tls-cert and --nats-tls-key\n`,
    )
    const noCa = await tea(['task', 'list', '--nats', url, '--nats-tls-cert', 'client.pem', '--nats-tls-key', 'client.key'])
    assert.is(noCa.code, 1)
    assert.match(noCa.err, `cannot reach NATS at ${url}: TLS failed (unable to verify the first certificate); check --nats-tls-ca`)
    assert.is(noCa.err.trim().split('\n').length, 1, noCa.err)
  },
)

skipIf(test, missing, 'a certificate without its key is a usage error (exit 2) before any connection', async () => {
  const r = await tea(['task', 'list', '--nats', `tls://127.0.0.1:${server!.port}`, '--nats-tls-cert', 'client.pem'])
  assert.is(r.code, 2)
  assert.match(r.err, 'give --nats-tls-cert and --nats-tls-key together')
})

test.run()
