import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startCallbackReceiver, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { createAgent, gql, postWebhook } from "../../test/helpers/webhooks.js";
import { waitUntil } from "../../test/helpers/worker-process.js";

/**
 * The outbound engine under one account's bad targets, black-box: account A's callbacks all hang
 * on a receiver that never answers, more of them than the worker has outbound slots; account B's
 * callback still goes out while A's are in flight (OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT). A
 * delivery whose workflow is gone ends failed, with why, in `Job.deliveries` (the stuck-delivery
 * sweep). `redeliver` and `sendTestCallback` are capped per job and per trigger (RATE_LIMITED).
 */
describe("outbound fairness, stuck deliveries and resend caps", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let slow: CallbackReceiver;
  let app: TestApp;
  const SLOTS = 6;
  const A_JOBS = SLOTS;

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    slow = await startCallbackReceiver("127.0.0.2", ca);
    app = await startTestApp({
      worker: true,
      env: {
        EGRESS_ALLOW_PRIVATE: "false",
        EGRESS_ALLOW_ADDRESSES: "127.0.0.2",
        EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }),
        EGRESS_CA_FILE: ca.caFile,
        // Two attempts, the second at once; a hanging attempt lasts until its answer timeout.
        OUTBOUND_RETRY_SCHEDULE: "0",
        OUTBOUND_CONNECT_TIMEOUT_MS: "1000",
        OUTBOUND_TIMEOUT_MS: "30000", // A's hanging attempts outlast B's whole run and callback, even on a loaded machine
        OUTBOUND_CONCURRENCY: String(SLOTS),
        OUTBOUND_MAX_CONCURRENT_PER_ACCOUNT: "2",
        OUTBOUND_MAX_PENDING_RESENDS: "2",
        OUTBOUND_STUCK_GRACE_MS: "1000",
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await hooks?.close();
    await slow?.close();
    ca?.cleanup();
  });

  async function account(name: string): Promise<{ admin: string; trigger: (url: string) => Promise<{ id: string; secret: string }> }> {
    const { adminToken: admin } = await createAccount(app.url, app.operatorToken, name, "10");
    const agentId = await createAgent(app.url, admin, { name: "echo", script: "export default async function run(input) { return input; }" });
    const trigger = async (u: string) => {
      const r = await gql(app.url, admin, `mutation($a: ID!, $u: String) { createTrigger(agentId: $a, callbackUrl: $u) { trigger { id } secret } }`, { a: agentId, u });
      expect(r.errors).toBeUndefined();
      return { id: r.data.createTrigger.trigger.id, secret: r.data.createTrigger.secret };
    };
    return { admin, trigger };
  }
  const run = async (t: { id: string; secret: string }): Promise<string> => {
    const r = await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret });
    expect(r.status).toBe(202);
    return r.body.job_id;
  };
  const deliveries = async (admin: string, jobId: string): Promise<any[]> => {
    const r = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { deliveries { deliveryId attempt statusCode error deliveryStatus } } }`, { id: jobId });
    expect(r.errors).toBeUndefined();
    return r.data.job.deliveries;
  };
  const reached = (receiver: CallbackReceiver, jobId: string) => receiver.requests.some((c) => c.headers["webhook-id"] === `msg_${jobId}`);

  it("a delivery whose workflow is gone ends failed with why, and Job.deliveries shows it", async () => {
    const e = await account("orphan");
    const jobId = await run(await e.trigger(`https://hooks.test:${hooks.port}/hang-e`));
    // The first attempt is in flight; the workflow goes. The attempt still ends (answer timeout)
    // and is recorded, with more to come: nothing would ever make them.
    await waitUntil(() => reached(hooks, jobId), 60_000, "the first attempt");
    await app.runtime.temporal.client.workflow.getHandle(`dlv_${jobId}`).terminate("test: the workflow is lost");
    await waitUntil(async () => (await deliveries(e.admin, jobId)).some((d) => d.deliveryStatus === "FAILED"), 90_000, "the stuck delivery swept");
    const log = await deliveries(e.admin, jobId);
    expect(log.map((d) => [d.attempt, d.statusCode, d.deliveryStatus])).toEqual([[1, null, "FAILED"], [2, null, "FAILED"]]);
    expect(log[0].error).toMatch(/did not answer/);
    expect(log[1].error).toMatch(/the delivery was abandoned: its workflow is terminated/);
    expect(hooks.to("/hang-e")).toHaveLength(1);
  }, 120_000);

  const aJobs: string[] = [];

  it("one account's hanging targets hold at most its share of the slots: another account's callback goes out while they are all in flight", async () => {
    const a = await account("hog");
    const hang = await a.trigger(`https://hooks.test:${slow.port}/hang`);
    for (let i = 0; i < A_JOBS; i++) aJobs.push(await run(hang));
    // A's attempts are in flight (its share: 2); the rest of its deliveries wait for a slot.
    await waitUntil(() => slow.to("/hang").length >= 2, 60_000, "A's first attempts");

    const b = await account("neighbour");
    const bJob = await run(await b.trigger(`https://hooks.test:${hooks.port}/ok-b`));
    await waitUntil(async () => (await deliveries(b.admin, bJob)).some((d) => d.deliveryStatus === "DELIVERED"), 60_000, "B's callback");
    // B was served while every one of A's deliveries was still pending: none has an attempt recorded.
    for (const id of aJobs) expect(await deliveries(a.admin, id)).toEqual([]);
    expect(slow.to("/hang").length).toBeLessThanOrEqual(2);
    // A's hanging receiver goes away: its deliveries end (refused connections) and free their slots.
    await slow.close();
  }, 120_000);

  it("redeliver and sendTestCallback are capped by the pending deliveries of the job or trigger", async () => {
    const d = await account("resender");
    const t = await d.trigger(`https://hooks.test:${hooks.port}/hang-d`);
    const jobId = await run(t);
    await waitUntil(async () => (await app.runtime.pool.query("select 1 from deliveries where job_id = $1", [jobId])).rowCount === 1, 60_000, "the job's callback recorded");
    const redeliver = () => gql(app.url, d.admin, `mutation($id: ID!) { redeliver(jobId: $id) { id } }`, { id: jobId });
    expect((await redeliver()).errors).toBeUndefined(); // the first cycle and this one: 2 pending
    const over = await redeliver();
    expect(over.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", param: "jobId", limit: 2 });
    expect(over.errors?.[0]?.message).toMatch(/already has 2 deliveries of its event pending \(at most 2\)/);

    // Three at once: the count is serialised, so exactly two are accepted.
    const test = () => gql(app.url, d.admin, `mutation($id: ID!) { sendTestCallback(triggerId: $id) { deliveryId } }`, { id: t.id });
    const answers = await Promise.all([test(), test(), test()]);
    expect(answers.filter((r) => r.errors === undefined)).toHaveLength(2);
    const refused = answers.find((r) => r.errors)!;
    expect(refused.errors![0].extensions).toMatchObject({ code: "RATE_LIMITED", param: "triggerId" });
  }, 120_000);
});
