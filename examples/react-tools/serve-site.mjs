// Serves site/ on http://127.0.0.1:47831/ until Ctrl-C or kill: the library's page this agent reads. The address
// is fixed because it is part of the recorded model exchanges (the cassette). `npm run demo` and the examples test
// start the same server themselves.
//   node examples/react-tools/serve-site.mjs &
//   tea run examples/react-tools/agent.yaml --replay examples/react-tools/cassette.jsonl
//   kill %1
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SITE_PORT, serveSite } from '../../scripts/example-site.mjs'

const stop = await serveSite(join(dirname(fileURLToPath(import.meta.url)), 'site'))
console.error(`serving examples/react-tools/site on http://127.0.0.1:${SITE_PORT}/ (Ctrl-C stops it)`)
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => stop().then(() => process.exit(0)))
