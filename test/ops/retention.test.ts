import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startCallbackReceiver, type CallbackReceiver } from "../helpers/callback-receiver.js";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstreams.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { must, newAgent, newTrigger, postWebhook, waitForJob } from "../helpers/ops.js";
import { makeTestCa, type TestCa } from "../helpers/tls.js";
import { waitUntil } from "../helpers/worker-process.js";

const DAY = 86_400_000;
// A script that spreads its input everywhere it can: the model call, the log, the result.
const SPREADER = `export default async function run(input, ctx) {
  ctx.log("got", JSON.stringify(input));
  const r = await ctx.chat({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "Summarise " + JSON.stringify(input) }] });
  const kept = await ctx.step("keep", async () => ({ again: input }));
  return { input, answer: r.content, kept };
}`;
// A script whose failure message carries the payload (jobs.error is a copy too).
const FAILER = `export default async function run(input, ctx) {
  await ctx.step("seen", async () => input);
  throw new Error("cannot handle " + JSON.stringify(input));
}`;

/**
 * Retention (docs/guides/graphql.md): after the account's window no copy of a webhook payload is left
 * anywhere in the database (audit entry, the run's thread, its result and log, a replay's copy,
 * the completion callbacks that carried the result); idempotency records go after 24 hours. The purge workflow takes the time to purge "as of", so
 * the test moves the clock instead of waiting.
 */
describe("retention purges every copy of a payload", () => {
  let fake: FakeUpstream;
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let app: TestApp;
  let admin: string;
  const marker = `PII-${randomBytes(8).toString("hex")}`;
  const jobs: string[] = [];
  let failed: string;

  /** Every row of every table of the app's schema whose text form contains `text`, by table. */
  const copies = async (text: string): Promise<Record<string, number>> => {
    const { rows: tables } = await app.runtime.pool.query<{ t: string }>(
      "select quote_ident(table_name) as t from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
    );
    const found: Record<string, number> = {};
    for (const { t } of tables) {
      const { rows } = await app.runtime.pool.query<{ n: number }>(`select count(*)::int as n from ${t} x where x::text like $1`, [`%${text}%`]);
      if (rows[0]!.n > 0) found[t] = rows[0]!.n;
    }
    return found;
  };
  const purge = (asOf: Date) =>
    app.runtime.temporal.client.workflow.execute("purgePayloads", { taskQueue: app.config.temporal.taskQueue, workflowId: `purge-${asOf.getTime()}-${Math.random()}`, args: [asOf.toISOString()] });

  beforeAll(async () => {
    fake = await startFakeUpstream();
    ca = makeTestCa(["hooks.test"], ["127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    const egress = { EGRESS_ALLOW_PRIVATE: "false", EGRESS_ALLOW_ADDRESSES: "127.0.0.2", EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2" }), EGRESS_CA_FILE: ca.caFile };
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "a", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "b", ...egress } });
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    const plain = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "plain" }));
    const spreader = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "spreader", script: SPREADER }));
    // Its completion callbacks carry the result (and so the payload) to a receiver.
    await must(app.url, admin, `mutation($id: ID!, $u: String) { updateTrigger(id: $id, callbackUrl: $u) { id } }`, { id: spreader.id, u: `https://hooks.test:${hooks.port}/spread` });
    for (const [trigger, key] of [[plain, "k1"], [spreader, "k2"]] as const) {
      const r = await postWebhook(app.url, trigger, { customer: marker, n: 1 }, { "Idempotency-Key": `${key}-${marker}` });
      expect(r.status).toBe(202);
      jobs.push(r.body.job_id);
    }
    for (const id of jobs) expect((await waitForJob(app.url, admin, id)).status).toBe("DONE");
    const failer = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "failer", script: FAILER }));
    failed = (await postWebhook(app.url, failer, { customer: marker, n: 2 })).body.job_id;
    const end = await waitForJob(app.url, admin, failed);
    expect(end.status).toBe("FAILED");
    expect(end.error).toContain(marker);
    const replay = await must(app.url, admin, `mutation($id: ID!) { replayJob(id: $id) { id } }`, { id: jobs[1] });
    jobs.push(replay.replayJob.id);
    expect((await waitForJob(app.url, admin, replay.replayJob.id)).status).toBe("DONE");
    await waitUntil(() => hooks.to("/spread").length === 2, 60_000, "the spreader's callbacks");
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
    await hooks?.close();
    ca?.cleanup();
  });

  const deliveryStatuses = async (jobId: string): Promise<string[]> =>
    (await must<{ job: { deliveries: { deliveryStatus: string }[] } }>(app.url, admin, `query($id: ID!) { job(id: $id) { deliveries { deliveryStatus } } }`, { id: jobId })).job.deliveries.map((d) => d.deliveryStatus);

  it("before the window the payload is kept (audit, thread, result, log, replay); idempotency records go after 24 hours", async () => {
    const before = await copies(marker);
    // job_steps: ctx.chat's answer and ctx.step's values; jobs: results and the failed run's error.
    expect(Object.keys(before).sort()).toEqual(expect.arrayContaining(["audit_entries", "deliveries", "idempotency_records", "job_steps", "jobs", "messages"]));
    expect(before.audit_entries).toBe(4);
    await purge(new Date(Date.now() + DAY + 60_000));
    const dayLater = await copies(marker);
    expect(dayLater.idempotency_records).toBeUndefined();
    expect(dayLater.audit_entries).toBe(4);
    expect(dayLater.job_steps).toBe(before.job_steps);
    expect(dayLater.messages).toBe(before.messages);
    const audit = await must(app.url, admin, `query($id: ID!) { job(id: $id) { audit { payload payloadPurgedAt } } }`, { id: jobs[0] });
    expect(audit.job.audit).toEqual({ payload: { customer: marker, n: 1 }, payloadPurgedAt: null });
    // Within the window a redelivery sends the event as it was, result and all.
    const first = hooks.to("/spread").find((c) => c.headers["webhook-id"] === `msg_${jobs[1]}`)!;
    await must(app.url, admin, `mutation($id: ID!) { redeliver(jobId: $id) { id } }`, { id: jobs[1] });
    await waitUntil(() => hooks.to("/spread").length === 3, 60_000, "the redelivery");
    expect(hooks.to("/spread")[2]!.body).toBe(first.body);
    expect(first.body).toContain(marker);
    await waitUntil(async () => (await deliveryStatuses(jobs[1]!)).every((s) => s === "DELIVERED"), 30_000, "the redelivery's log");
  });

  it("after the account's window no copy is left anywhere; the runs keep status and cost; replay is refused", async () => {
    const costs = await Promise.all(jobs.map(async (id) => (await must(app.url, admin, `query($id: ID!) { job(id: $id) { cost } }`, { id })).job.cost));
    await purge(new Date(Date.now() + 31 * DAY));
    expect(await copies(marker)).toEqual({});
    for (const [i, id] of jobs.entries()) {
      const j = (await must(app.url, admin, `query($id: ID!) { job(id: $id) { status cost result logs audit { payload payloadPurgedAt result } } }`, { id })).job;
      expect(j).toMatchObject({ status: "DONE", cost: costs[i], result: null, logs: [], audit: { payload: null, result: null } });
      expect(j.audit.payloadPurgedAt).not.toBeNull();
    }
    const f = (await must(app.url, admin, `query($id: ID!) { job(id: $id) { status error } }`, { id: failed })).job;
    expect(f).toEqual({ status: "FAILED", error: "[purged]" });
    const r = await gql(app.url, admin, `mutation($id: ID!) { replayJob(id: $id) { id } }`, { id: jobs[0] });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "id" });
    expect(r.errors?.[0]?.message).toContain("purged");
    // The completion event carried the result: it is not sent again, and its delivery log stays.
    const again = await gql(app.url, admin, `mutation($id: ID!) { redeliver(jobId: $id) { id } }`, { id: jobs[1] });
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "jobId" });
    expect(again.errors?.[0]?.message).toContain("purged");
    expect(await deliveryStatuses(jobs[1]!)).toEqual(["DELIVERED", "DELIVERED"]);
    expect(hooks.to("/spread")).toHaveLength(3);
  });

  it("a shorter window applies per account, and a fresh payload of another account stays", async () => {
    const other = (await createAccount(app.url, app.operatorToken, "other", "1")).adminToken;
    const t = await newTrigger(app.url, other, await newAgent(app.url, other, { name: "o", script: "export default async function run(i) { return 1; }" }));
    const keep = `KEEP-${randomBytes(6).toString("hex")}`;
    const kept = await postWebhook(app.url, t, { keep });
    await waitForJob(app.url, other, kept.body.job_id);
    await must(app.url, admin, `mutation { updateAccountSettings(input: { retentionDays: 1 }) { retentionDays } }`);
    const mine = `MINE-${randomBytes(6).toString("hex")}`;
    const plain = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "p2", script: "export default async function run(i) { return 1; }" }));
    await waitForJob(app.url, admin, (await postWebhook(app.url, plain, { mine })).body.job_id);
    await purge(new Date(Date.now() + 2 * DAY));
    expect(await copies(mine)).toEqual({});
    expect((await copies(keep)).audit_entries).toBe(1);
  });
});
