import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../test/helpers/https-receiver.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { waitUntil } from "../../test/helpers/worker-process.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

/**
 * The default per-account run limit (RUN_MAX_CONCURRENT_PER_ACCOUNT unset) is a fair share of the
 * run slots: a lone account — a single-tenant installation — uses every slot of its worker
 * (SANDBOX_POOL_SIZE 3), not a fixed two; the run beyond them waits for a slot and says so.
 */
describe("the default run limit: a lone account uses every slot", () => {
  let ca: TestCa;
  let upstream: HttpsReceiver;
  let app: TestApp;

  beforeAll(async () => {
    ca = makeTestCa(["api.test"], ["127.0.0.1"]);
    upstream = await startHttpsReceiver("127.0.0.1", ca);
    app = await startTestApp({
      worker: true,
      env: {
        EGRESS_ALLOW_PRIVATE: "true",
        EGRESS_RESOLVE: JSON.stringify({ "api.test": "127.0.0.1" }),
        EGRESS_CA_FILE: ca.caFile,
        SANDBOX_POOL_SIZE: "3",
        SCRIPT_WALL_TIME_MS: "600000",
        EGRESS_TIMEOUT_MS: "600000",
      },
    });
  });
  afterAll(async () => {
    if (upstream) {
      upstream.parking = false;
      upstream.releaseHeld();
    }
    await app?.close();
    await upstream?.close();
    ca?.cleanup();
  });

  it("four parked runs of one account: three execute at once, the fourth waits for a slot", async () => {
    const { adminToken } = await createAccount(app.url, app.operatorToken, "alone", "10");
    const agentId = await createAgent(app.url, adminToken, {
      name: "parked",
      script: `export default async function run(input, ctx) { const r = await ctx.fetch(input.base + "/park/" + input.n, { method: "POST" }); return r.status; }`,
    });
    expect((await gql(app.url, adminToken, `mutation($id: ID!) { setAgentEgress(agentId: $id, allow: ["api.test"]) { id } }`, { id: agentId })).errors).toBeUndefined();
    const t = await createTrigger(app.url, adminToken, agentId);
    const headers = { "x-trigger-secret": t.secret };
    upstream.parking = true;
    const base = `https://api.test:${upstream.port}`;
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) {
      const r = await postWebhook(app.url, t.id, JSON.stringify({ base, n }), headers);
      expect(r.status).toBe(202);
      ids.push(r.body.job_id);
    }
    const status = async (id: string) => (await getJson(`${app.url}/api/agent-run-jobs/${id}/status`, headers)).body;

    // More than the old fixed limit of two: every sandbox of the worker runs this account's scripts.
    await waitUntil(() => upstream.held.length === 3, 180_000, "three runs parked at the upstream");
    await waitUntil(async () => (await Promise.all(ids.map(status))).some((s) => s.waiting_for === "account_run_limit"), 60_000, "the fourth run's wait");
    const states = await Promise.all(ids.map(status));
    expect(states.filter((s) => s.status === "running")).toHaveLength(3);
    expect(states.filter((s) => s.status === "queued" && s.waiting_for === "account_run_limit")).toHaveLength(1);
    expect(upstream.held.length).toBe(3);

    upstream.parking = false;
    upstream.releaseHeld();
    for (const id of ids) expect((await waitForJob(app.url, id, headers, 180_000)).status).toBe("done");
    // Once it ran, a job no longer reports a wait.
    for (const id of ids) expect(await status(id)).not.toHaveProperty("waiting_for");
  }, 400_000);
});
