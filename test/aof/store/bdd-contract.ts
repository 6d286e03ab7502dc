/**
 * The AOF-BDD scenario contract (docs/fleet.md, STYLE.md point 10): every scenario of specs/aof-protocols-bdd.md
 * that is about the task store, stated once through the task-store port and run on every adapter —
 * `bdd-fs.test.ts` on the filesystem store, `nats/bdd.test.ts` on JetStream against a real nats-server. A test is
 * titled `AOF-BDD-NN TASK-0xx <scenario name>` (NN: the scenario's position in the spec, 1–93; TASK-0xx: its
 * section); the cases beyond the BDD text follow each feature's scenarios. No case names a file or a folder: what
 * the filesystem keeps where is tested by the filesystem's own tests (run-layout.test.ts, handoff.test.ts, …).
 *
 * In the contract (64 scenarios), by case file:
 *   bdd-completion-cases.ts  21–24 run result artifact; 40–45 completion reports; 46–48 session end; 89, 92, 93
 *   bdd-routing-cases.ts     28–30 what an ignored or rejected message logs; 31–36 routing by type; 37–39 task not
 *                            found; 91 a handler error
 *   bdd-status-cases.ts      55–61 status updates and the Work Log
 *   bdd-handoff-cases.ts     62–70 handoff requests and acknowledgments; 71–74 the delegation depth guard; 90
 *   bdd-scheduler-cases.ts   75–77 stale heartbeat detection; 78–83 recovery with or without a result; 84–85 run
 *                            expiry; 86–88 the scheduler's poll
 *
 * Not in the contract (29 scenarios), with why — each stays where it is:
 *   01–20  TASK-057 envelope and payload schemas: validation of a value, no store (schemas.test.ts)
 *   25–27  TASK-058 parsing an object, an `AOF/1 …` string, plain JSON: the parser alone, which neither reads nor
 *          logs anything (parse-message.test.ts)
 *   49–54  TASK-059 resolveCompletionTransitions: a pure function of status, metadata and outcome
 *          (completion.test.ts; applying what it returns is 40–48 and 79–83, here)
 * No scenario is about the folder layout alone; where one also names a path (21 `runs/<ID>/run_result.json`, 62
 * `tasks/<status>/<ID>/inputs/`, 64 "written atomically") the contract checks the store's part and the path is
 * checked on the filesystem (run-artifacts.test.ts, handoff.test.ts).
 *
 * Where the stores differ on purpose, one case says both (`store.kind`): a message sent twice byte for byte is
 * routed again on the filesystem, which keeps no message log, and recognised as a duplicate on NATS
 * (docs/fleet.md, "Messages and routers"). The scenarios' own duplicates (89, 90) are the same content delivered
 * again as a new message, which both stores route.
 */

import { suite } from 'uvu'
import { completionCases } from './bdd-completion-cases.ts'
import { handoffCases } from './bdd-handoff-cases.ts'
import { routingCases } from './bdd-routing-cases.ts'
import { schedulerCases } from './bdd-scheduler-cases.ts'
import { statusCases } from './bdd-status-cases.ts'
import type { StoreHandle } from './store-contract.ts'

/** `open` gives each test a fresh, empty store; `teardown` runs once after the last test (a shared server's stop). */
export function bddContract(name: string, open: () => Promise<StoreHandle>, teardown?: () => Promise<void>): void {
  const t = suite<{ h: StoreHandle }>(`AOF-BDD contract: ${name}`)
  if (teardown) t.after(teardown)
  t.before.each(async (ctx) => {
    ctx.h = await open()
  })
  t.after.each(async (ctx) => {
    await ctx.h.cleanup()
  })
  completionCases(t)
  routingCases(t)
  statusCases(t)
  handoffCases(t)
  schedulerCases(t)
  t.run()
}
