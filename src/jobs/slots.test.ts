import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../test/helpers/https-receiver.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { spawnWorker, waitUntil, type WorkerProcess } from "../../test/helpers/worker-process.js";
import { createAgent, createTrigger, gql, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

/**
 * A worker takes only as many runs as it has sandboxes. Worker A (one sandbox) starts on a
 * backlog of eight runs whose first call is parked at the receiver; worker B starts later. If A
 * had accepted the whole backlog (more activity slots than sandboxes), B would find nothing to do.
 */
describe("activity slots match the sandbox pool", () => {
  let ca: TestCa;
  let receiver: HttpsReceiver;
  let app: TestApp;
  const workers: WorkerProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    ca = makeTestCa(["api.test"], ["127.0.0.1"]);
    receiver = await startHttpsReceiver("127.0.0.1", ca);
    env = { EGRESS_ALLOW_PRIVATE: "true", EGRESS_RESOLVE: JSON.stringify({ "api.test": "127.0.0.1" }), EGRESS_CA_FILE: ca.caFile, SANDBOX_POOL_SIZE: "1" };
    app = await startTestApp({ env });
  });
  afterAll(async () => {
    for (const w of workers) await w.kill("SIGKILL");
    await app?.close();
    await receiver?.close();
    ca?.cleanup();
  });

  it("two workers and a backlog: both stay busy", async () => {
    const { adminToken } = await createAccount(app.url, app.operatorToken, "slots", "10");
    const agentId = await createAgent(app.url, adminToken, {
      name: "parked",
      script: `export default async function run(input, ctx) { const r = await ctx.fetch(input.base + "/park/" + input.n, { method: "POST" }); return { n: input.n, status: r.status }; }`,
    });
    await gql(app.url, adminToken, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["api.test"]) { id } }`, { id: agentId });
    const t = await createTrigger(app.url, adminToken, agentId);
    receiver.parking = true;
    const ids: string[] = [];
    for (let n = 0; n < 8; n++) {
      const r = await postWebhook(app.url, t.id, JSON.stringify({ base: `https://api.test:${receiver.port}`, n }), { "x-trigger-secret": t.secret });
      ids.push(r.body.job_id);
    }
    workers.push(spawnWorker(app, env));
    await waitUntil(() => receiver.held.length === 1, 180_000, "worker A's first run");
    workers.push(spawnWorker(app, env));
    // B finds work in the queue although A is busy: the backlog was still in Temporal.
    await waitUntil(() => receiver.held.length === 2, 180_000, "worker B's first run");
    receiver.parking = false;
    receiver.releaseHeld();
    for (const id of ids) expect((await waitForJob(app.url, id, { "x-trigger-secret": t.secret }, 180_000)).status).toBe("done");

    // Who ran what: the identity on each run's ActivityTaskStarted event (pid@host of the worker).
    const ranBy = new Map<string, number>();
    for (const id of ids) {
      const history = await app.runtime.temporal.client.workflow.getHandle(id).fetchHistory();
      for (const e of history.events ?? []) {
        const who = e.activityTaskStartedEventAttributes?.identity;
        if (who) ranBy.set(who, (ranBy.get(who) ?? 0) + 1);
      }
    }
    expect(ranBy.size).toBe(2);
    for (const n of ranBy.values()) expect(n).toBeGreaterThanOrEqual(1);
  }, 400_000);
});
