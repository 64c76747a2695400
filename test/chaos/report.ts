import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tally } from "./load.js";
import type { CallbackFigures } from "./callbacks.js";
import type { A2aPushFigures } from "./a2a-push.js";
import type { AskFigures } from "./asks.js";

/** RELIABILITY.md: the figures of the last chaos run, written by the suite itself. */
export interface ChaosFigures {
  startedAt: string;
  durationSeconds: number;
  faults: { fault: string; detail: string }[];
  webhooks: Tally & { logical: number; accepted: number; notAccepted: number; duplicates: number };
  chat: Tally & { completed: number; wrong: number; truncated: number; inBandErrors: Record<string, number> };
  jobs: { total: number; done: number; failed: number; stuck: number; wrongResults: number; lost: number };
  temporal: { executions: number; jobsWithoutExecution: number; jobsWithSeveralExecutions: number };
  ledger: { accounts: number; mismatches: number };
  subscription: { terminalEventsSeen: number; missing: number; closedUnexpectedly: boolean };
  callbacks: CallbackFigures;
  /** The A2A test after the load: its push configs' figures, the faults it ran through, and the push deliveries as stored. */
  a2aPush?: A2aPushFigures & { faults: string[]; deliveries: { event: string; status: string; n: number }[] };
  /** The asking-runs test after that: its answers' figures, their HTTP tally and the faults they were sent through. */
  asks?: Omit<AskFigures, "wrong"> & { wrong: number; tally: Tally; faults: string[] };
}

const statusLine = (t: Tally) =>
  Object.entries(t.byStatus)
    .sort()
    .map(([s, n]) => `${s}: ${n}`)
    .join(", ");

const failuresLine = (t: Tally) => Object.entries(t.failures).map(([c, n]) => `${c}: ${n}`).join(", ") || "none";

/** The A2A push part of "What runs" and its rows of "Results" (empty when the A2A test did not run after the load). */
function a2aPushText(p: ChaosFigures["a2aPush"]): { runs: string; rows: string } {
  if (!p) return { runs: "", rows: "" };
  const deliveries = p.deliveries.map((d) => `${d.event} ${d.status}: ${d.n}`).join(", ") || "none";
  return {
    runs: `
After the load, ${p.tasks} A2A tasks of an automation agent (a script of fifteen slow \`ctx.chat\`
calls), sent through the balancer with \`returnImmediately\`, run through kill -9 of a worker and
then of an API instance (${p.faults.join("; ")}). They have ${p.configs} push configs on the same
receiver (30 % of POSTs answered 500): ${p.configsInSend} given in the send's
\`configuration.taskPushNotificationConfig\`, ${p.configsCreated} created by
\`CreateTaskPushNotificationConfig\` right after the send (${p.configs - p.tasks} tasks have both). The suite waits
until every config's terminal event was acknowledged and every push delivery settled.
`,
    rows: `| A2A push: tasks / configs (given in the send / created after it) | ${p.tasks} / ${p.configs} (${p.configsInSend} / ${p.configsCreated}) |
| A2A push: configs whose COMPLETED task event was acknowledged (2xx, the config's token, its task) | ${p.delivered} of ${p.configs} |
| **A2A terminal pushes lost** (a config never acknowledged its task's COMPLETED event) | **${p.lost}** |
| A2A push: configs with exactly one terminal \`webhook-id\` (\`msg_<config id>_completed\`) / with several terminal events / terminal events of another state | ${p.exactlyOnce} / ${p.severalTerminalEvents} / ${p.wrongTerminalState} |
| A2A push: terminal acknowledged more than once (at-least-once, same webhook-id) / configs that also got WORKING | ${p.duplicateDeliveries} / ${p.workingSeen} |
| A2A push: POSTs received / answered 500 / without the config's token / naming another task / strays | ${p.attempts} / ${p.receiverErrors} / ${p.wrongToken} / ${p.wrongTask} / ${p.strays} |
| A2A push deliveries as stored (state reported, outcome) | ${deliveries} |
`,
  };
}

/** The asking runs' part of "What runs" and their rows of "Results" (empty when that test did not run after the load). */
function asksText(a: ChaosFigures["asks"]): { runs: string; rows: string } {
  if (!a) return { runs: "", rows: "" };
  return {
    runs: `
Last, ${a.runs} runs that ask, started by webhooks through the balancer: the script calls \`ctx.chat\`
(a journaled step), then \`ctx.ask\` with a small JSON schema, and returns the answer. Once every
run waits (\`input_required\`), each is answered twice at once, by GraphQL \`answerJobInput\` and
by its answer URL (\`input_request.answer_url\` of the job's status), both through the balancer,
one run every 250 ms and five at once just before each fault: kill -9 of a worker half a second
after a burst (runs resuming on it), then of an API instance 20 ms after one (answers in flight on
it), the last third answered while it restarts (${a.faults.join("; ")}).
An answer whose request met a cut connection, the balancer's 502/504 or a 503 is sent again, as
a client would; 409 \`input_already_answered\` (GraphQL: CONFLICT) is the loser's expected answer.
`,
    rows: `| asking runs: started / done / not done | ${a.runs} / ${a.done} / ${a.unfinished} |
| answers sent (two per run) / HTTP attempts / answers sent more than once (transport failure, 502/504, 503) | ${a.answersSent} / ${a.attempts} / ${a.retried} |
| answers accepted / refused as already answered / other outcomes | ${a.accepted} / ${a.refused} / ${a.otherOutcomes} |
| answer attempts without a response (in flight on a killed instance): connection failures / balancer 502/504 | ${failuresLine(a.tally)} / ${a.tally.balancerErrors} |
| runs whose winning answer took effect with its response lost (its resend saw 409; both channels refused) | ${a.appliedUnseen} |
| answer HTTP responses by status (a GraphQL refusal is a 200 with a CONFLICT error) | ${statusLine(a.tally)} |
| **asking runs answered wrongly** (not exactly one answer accepted, or a result other than the winning answer) | **${a.wrong}** |
| asking runs whose \`ctx.chat\` before the ask ran more than once (upstream calls, journal, ledger holds) / with other than one workflow execution | ${a.stepRepeated} / ${a.executionsNotOne} |
| the account's balance while every run waited / after every run ended (waiting and resuming bill nothing) | ${a.balanceWhileWaiting} / ${a.balanceAfter} |
`,
  };
}

const FOUND = `
## What the suite found, and the fixes

The first runs of this suite against the topology failed; each of these is fixed and the suite
now guards it:

- **500s during a database restart.** Requests that hit a cut or refused PostgreSQL connection
  answered 500 \`internal_error\` (16 webhooks, 10 chats in one run). Database outages now answer
  503 \`service_unavailable\` with \`Retry-After: 1\`, over HTTP and GraphQL (\`src/errors/unavailable.ts\`).
- **API processes crashed on a database restart.** The dispatcher logged \`{ err: String(err) }\` and
  the logger's error serializer threw on a string, outside any promise: both API instances died.
  The serializer accepts any value now, and the dispatcher logs the error itself.
- **The dispatcher stopped for good after a lost connection** ("Connection terminated" was taken for
  shutdown); only a closed pool stops it now.
- **Subscribers missed terminal events** (10 in one run): transitions committed while an instance's
  LISTEN connection was reconnecting sent NOTIFYs nobody heard. After a reconnect the instance now
  replays the current state of the jobs that changed meanwhile.
- **PostgreSQL and Temporal**: Temporal stores membership ports in a smallint, so the stack picks
  them below 32768; PostgreSQL (run as \`postgres\` when root) needs a traversable \`DATA_DIR\`.
`;

export function writeReliabilityReport(root: string, f: ChaosFigures): void {
  const push = a2aPushText(f.a2aPush);
  const asks = asksText(f.asks);
  const text = `# Reliability

Figures of the last run of the chaos suite (\`test/chaos/chaos.test.ts\`), written by the suite itself.
Command: \`npx vitest run test/chaos\` (part of \`npm test\` and of \`.ci/run\`). Run started ${f.startedAt},
${f.durationSeconds} s of load, faults and verification (the stack's start not counted), on a machine
with 2 shared cores.

## What runs

\`npm run stack:prod\`'s topology: PostgreSQL for the app, a separate PostgreSQL for Temporal, the
Temporal server v1.32.2 on PostgreSQL, two workers, two API instances (\`NODE_ENV=production\`)
behind HAProxy (TLS, health check on \`/readyz\`). All load goes through the balancer: webhooks
(a script that calls \`ctx.chat\`, so every job also bills) and chat completions (half streamed)
against a local fake provider, from three webhook clients and two chat clients, each pausing
100 ms between requests. A graphql-ws subscription on \`api-1\` (never faulted) follows the
trigger's jobs. The trigger has a \`callbackUrl\` on a local HTTPS receiver that verifies each
completion callback with the \`standardwebhooks\` package and answers 500 at random (30 %), 200
otherwise (\`OUTBOUND_RETRY_SCHEDULE=1,2,4,8,15,30,30,30,30,30\`); after the faults the suite waits
until every terminal job's callback was acknowledged.
Webhook clients retry with the same \`Idempotency-Key\` after a 503, a reset
connection or the balancer's own 502/504; chat clients do not retry.
${push.runs}${asks.runs}
## Faults, one at a time, under load

| # | fault | detail |
|---|---|---|
${f.faults.map((x, i) => `| ${i + 1} | ${x.fault} | ${x.detail} |`).join("\n")}

The launcher restarts a process that dies (same ports, same data), as it does outside the tests.

## Results

| figure | value |
|---|---|
| webhook requests (HTTP attempts) | ${f.webhooks.requests} |
| webhook logical requests / accepted (202) / not accepted | ${f.webhooks.logical} / ${f.webhooks.accepted} / ${f.webhooks.notAccepted} |
| webhook responses by status | ${statusLine(f.webhooks)} |
| webhook connection failures (in flight on a killed instance) | ${failuresLine(f.webhooks)} |
| webhook balancer 502/504 (in flight on a killed instance) | ${f.webhooks.balancerErrors} |
| chat requests / answered correctly | ${f.chat.requests} / ${f.chat.completed} |
| chat responses by status | ${statusLine(f.chat)} |
| chat connection failures / balancer 502/504 / streams cut (in flight on a killed instance) | ${failuresLine(f.chat)} / ${f.chat.balancerErrors} / ${f.chat.truncated} |
| chat streams ended by an in-band error event | ${Object.entries(f.chat.inBandErrors).map(([c, n]) => `${c}: ${n}`).join(", ") || "none"} |
| 500s (or other unexpected 5xx) seen by clients | ${f.webhooks.serverErrors.length + f.chat.serverErrors.length} |
| 503s without Retry-After | ${f.webhooks.unavailableWithoutRetryAfter + f.chat.unavailableWithoutRetryAfter} |
| jobs: total / done / failed / left queued or running | ${f.jobs.total} / ${f.jobs.done} / ${f.jobs.failed} / ${f.jobs.stuck} |
| jobs with a wrong result | ${f.jobs.wrongResults} |
| **lost** (202 answered, job missing or not done) | **${f.jobs.lost}** |
| **duplicates** (a second job for one Idempotency-Key, or a job with several workflow executions) | **${f.webhooks.duplicates + f.temporal.jobsWithSeveralExecutions}** |
| Temporal executions of agentRun / jobs without one / jobs with more than one | ${f.temporal.executions} / ${f.temporal.jobsWithoutExecution} / ${f.temporal.jobsWithSeveralExecutions} |
| accounts whose ledger sum differs from the balance | ${f.ledger.mismatches} of ${f.ledger.accounts} |
| subscription: terminal events seen / missing; closed unexpectedly | ${f.subscription.terminalEventsSeen} / ${f.subscription.missing}; ${f.subscription.closedUnexpectedly ? "yes" : "no"} |
| completion callbacks: expected (terminal jobs) / delivered (2xx acknowledged) | ${f.callbacks.expected} / ${f.callbacks.delivered} |
| **callbacks lost** (terminal job never acknowledged by the receiver) | **${f.callbacks.lost}** |
| callback duplicate deliveries (a job acknowledged more than once, same webhook-id) | ${f.callbacks.duplicateDeliveries} |
| callback attempts received / answered 500 by the receiver | ${f.callbacks.attempts} / ${f.callbacks.receiverErrors} |
| callbacks whose signature did not verify / jobs with several webhook-ids / webhook-ids for several jobs | ${f.callbacks.unverified} / ${f.callbacks.jobsWithSeveralIds} / ${f.callbacks.idsWithSeveralJobs} |
${push.rows}${asks.rows}`;
  // Only the suite's own part is rewritten: sections written by hand (one per guarantee, each
  // naming the command that proves it) follow the marker and are kept as they are.
  const file = join(root, "RELIABILITY.md");
  const old = existsSync(file) ? readFileSync(file, "utf8") : "";
  const at = old.indexOf(HAND_WRITTEN);
  const rest = at >= 0 ? old.slice(at) : `${HAND_WRITTEN}\n`;
  writeFileSync(file, `${text}${FOUND}\n${rest}`);
}

/** Everything after this line in RELIABILITY.md is written by hand, not by the chaos suite. */
export const HAND_WRITTEN = "<!-- written by hand below: the chaos suite keeps everything after this line -->";
