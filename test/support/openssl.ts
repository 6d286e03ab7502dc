/**
 * openssl for tests that need TLS: whether it is here, and a throwaway self-signed certificate for 127.0.0.1 (EC key:
 * fast to make). .ci/install-sea-deps.sh installs it.
 */

import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { commandMissing } from './skip.ts'

/** Why openssl cannot run here, or undefined when it can (for `skipIf`). */
export function opensslMissing(): string | undefined {
  return commandMissing('openssl', ['version'], 'apt-get install openssl; .ci/install-sea-deps.sh does it')
}

/** Makes `<dir>/<name>.key` and `<dir>/<name>.pem`, a certificate for 127.0.0.1 valid for two days; returns their paths. */
export function selfSignedCertificate(dir: string, name: string): { key: string; cert: string } {
  const key = join(dir, `${name}.key`)
  const cert = join(dir, `${name}.pem`)
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']
  execFileSync('openssl', ['req', '-x509', ...ec, '-keyout', key, '-out', cert, '-days', '2', ...subject], { stdio: 'pipe' })
  return { key, cert }
}
