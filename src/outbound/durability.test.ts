import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { createAgent, gql, postWebhook } from "../../test/helpers/webhooks.js";
import { spawnWorker, waitUntil, type WorkerProcess } from "../../test/helpers/worker-process.js";

/**
 * A delivery outlives the worker that started it: kill -9 of the only worker while a callback
 * waits between attempts; a new worker finishes it (Temporal's timer and history, the delivery row).
 */
describe("outbound delivery durability", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let app: TestApp;
  const workers: WorkerProcess[] = [];
  const env = {
    EGRESS_ALLOW_PRIVATE: "false",
    EGRESS_ALLOW_ADDRESSES: "127.0.0.2",
    EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }),
    OUTBOUND_RETRY_SCHEDULE: "3,3",
    OUTBOUND_TIMEOUT_MS: "3000",
  };

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    app = await startTestApp({ env: { ...env, EGRESS_CA_FILE: ca.caFile } });
  });
  afterAll(async () => {
    for (const w of workers) await w.kill("SIGKILL");
    await app?.close();
    await hooks?.close();
    ca?.cleanup();
  });

  it("kill -9 of the worker between attempts: a new worker completes the delivery with the same webhook-id", async () => {
    const start = () => {
      const w = spawnWorker(app, { ...env, EGRESS_CA_FILE: ca.caFile, SANDBOX_POOL_SIZE: "4" });
      workers.push(w);
      return w;
    };
    const first = start();
    const { adminToken: admin } = await createAccount(app.url, app.operatorToken, "durable", "10");
    const agentId = await createAgent(app.url, admin, { name: "echo", script: "export default async function run(input) { return input; }" });
    const created = await gql(app.url, admin, `mutation($a: ID!, $u: String) { createTrigger(agentId: $a, callbackUrl: $u) { trigger { id } secret } }`, {
      a: agentId,
      u: `https://hooks.test:${hooks.port}/flaky1`,
    });
    const t = created.data.createTrigger;
    const r = await postWebhook(app.url, t.trigger.id, "{}", { "x-trigger-secret": t.secret });
    expect(r.status).toBe(202);
    const jobId: string = r.body.job_id;

    await waitUntil(() => hooks.to("/flaky1").length === 1, 120_000, "the first attempt");
    // The delivery's workflow (id = delivery id) has recorded the first attempt and started its timer.
    const handle = app.runtime.temporal.client.workflow.getHandle(`dlv_${jobId}`);
    await waitUntil(async () => (await handle.fetchHistory()).events?.some((e) => e.timerStartedEventAttributes) ?? false, 30_000, "the timer before attempt 2");
    // The first attempt was answered 500 and recorded; the workflow waits ~3 s for the second. Kill the worker.
    await first.kill("SIGKILL");
    start();

    await waitUntil(() => hooks.to("/flaky1").length >= 2, 120_000, "the attempt after the crash");
    const ids = new Set(hooks.to("/flaky1").map((c) => c.headers["webhook-id"]));
    expect(ids).toEqual(new Set([`msg_${jobId}`]));
    await waitUntil(async () => {
      const { rows } = await app.runtime.pool.query("select status from deliveries where job_id = $1", [jobId]);
      return rows[0]?.status === "delivered";
    }, 60_000, "delivered");
    const { rows } = await app.runtime.pool.query("select attempt, status_code from delivery_attempts a join deliveries d on d.id = a.delivery_id where d.job_id = $1 order by attempt", [jobId]);
    expect(rows.at(-1)).toMatchObject({ status_code: 200 });
    expect(rows[0]).toMatchObject({ attempt: 1, status_code: 500 });
  }, 240_000);
});
