import { MockActivityEnvironment } from "@temporalio/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createJobActivities } from "./activities.js";
import { retentionScheduleId } from "./schedule.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

describe("agent runs", () => {
  let app: TestApp;
  let admin: string;
  let accountId: string;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    ({ adminToken: admin, accountId } = await createAccount(app.url, app.operatorToken, "runs", "10"));
  });
  afterAll(async () => app?.close());

  it("a script's ctx.chat goes through the chat engine, is billed and recorded in the run's thread", async () => {
    const agent = await createAgent(app.url, admin, {
      name: "summariser",
      script: `export default async function run(input, ctx) {
        const a = await ctx.chat({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "Summarise " + input.text }] });
        const b = await ctx.chat({ messages: [{ role: "user", content: "again" }] });
        ctx.log("tokens", a.usage.total_tokens);
        return { first: a.content, second: b.content };
      }`,
    });
    const t = await createTrigger(app.url, admin, agent);
    const r = await postWebhook(app.url, t.id, JSON.stringify({ text: "the quarterly report" }), { "x-trigger-secret": t.secret });
    const status = await waitForJob(app.url, r.body.job_id, { "x-trigger-secret": t.secret });
    expect(status.status).toBe("done");
    const run = await getJson(`${app.url}/api/runs/${r.body.job_id}`, { "x-trigger-secret": t.secret });
    expect(run.body.result.first).toContain("Summarise the quarterly report");
    expect(run.body.result.second).toContain("again");
    expect(run.body.thread_id).toMatch(/^thr_/);
    expect(Number(run.body.cost)).toBeGreaterThan(0);
    expect(run.body.logs[0]).toMatch(/^tokens \d+$/);
    const messages = await app.runtime.pool.query("select role from messages where thread_id = $1 order by seq", [run.body.thread_id]);
    expect(messages.rows.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const audit = await app.runtime.pool.query("select payload, result, model_calls, cost_micros from audit_entries where job_id = $1", [r.body.job_id]);
    expect(audit.rows[0].payload).toEqual({ text: "the quarterly report" });
    expect(audit.rows[0].result).toEqual(run.body.result);
    expect(audit.rows[0].model_calls).toHaveLength(2);
    expect(audit.rows[0].cost_micros).toBeGreaterThan(0);
  });

  it("an agent without a script answers the payload as a user message in a new thread", async () => {
    const agent = await createAgent(app.url, admin, { name: "chatty", instructions: "Be brief" });
    const t = await createTrigger(app.url, admin, agent);
    const r = await postWebhook(app.url, t.id, JSON.stringify({ question: "status?" }), { "x-trigger-secret": t.secret });
    await waitForJob(app.url, r.body.job_id, { "x-trigger-secret": t.secret });
    const result = await getJson(`${app.url}/api/agent-run-jobs/${r.body.job_id}/result`, { "x-trigger-secret": t.secret });
    expect(result.body.status).toBe("done");
    expect(result.body.result).toMatchObject({ role: "assistant", content: expect.stringContaining('{"question":"status?"}') });
    expect(result.body.thread_id).toMatch(/^thr_/);
  });

  it("insufficient balance fails the run at once with a message a human can act on", async () => {
    const poor = await createAccount(app.url, app.operatorToken, "poor", "0");
    const agent = await createAgent(app.url, poor.adminToken, { name: "p" });
    const t = await createTrigger(app.url, poor.adminToken, agent);
    const r = await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret });
    const status = await waitForJob(app.url, r.body.job_id, { "x-trigger-secret": t.secret });
    expect(status).toMatchObject({ status: "failed", attempts: 1 });
    expect(status.error).toMatch(/Insufficient balance/);
  });

  it("script syntax errors are rejected at createAgent/updateAgent with the line", async () => {
    const r = await gql(app.url, admin, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, {
      i: { name: "broken", script: "export default async function run(input) {\n  const x = ;\n}" },
    });
    expect(r.errors?.[0]?.message).toMatch(/script: SyntaxError.*line 2/);
    expect(r.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const id = await createAgent(app.url, admin, { name: "ok", script: "export default async function run() { return 1; }" });
    const u = await gql(app.url, admin, `mutation($id: ID!, $i: UpdateAgentInput!) { updateAgent(id: $id, input: $i) { id } }`, { id, i: { script: "function run() {}" } });
    expect(u.errors?.[0]?.message).toMatch(/export default/);
  });

  it("retention: the purge nulls payloads older than the account's window (finished jobs only); the Schedule exists", async () => {
    const agent = await createAgent(app.url, admin, { name: "r", script: "export default async function run() { return 1; }" });
    const t = await createTrigger(app.url, admin, agent);
    const old = await postWebhook(app.url, t.id, JSON.stringify({ secret: "pii" }), { "x-trigger-secret": t.secret });
    const fresh = await postWebhook(app.url, t.id, JSON.stringify({ keep: true }), { "x-trigger-secret": t.secret });
    await waitForJob(app.url, old.body.job_id, { "x-trigger-secret": t.secret });
    await waitForJob(app.url, fresh.body.job_id, { "x-trigger-secret": t.secret });
    await gql(app.url, admin, `mutation { updateAccountSettings(input: { retentionDays: 7 }) { retentionDays } }`);
    await app.runtime.pool.query("update audit_entries set created_at = now() - interval '8 days' where job_id = $1", [old.body.job_id]);
    const purged = await new MockActivityEnvironment().run(createJobActivities(app.runtime).purgeExpiredPayloads, undefined, "runs-test-purge");
    expect(purged).toBeGreaterThanOrEqual(1);
    const rows = await app.runtime.pool.query("select job_id, payload, payload_purged_at from audit_entries where job_id = any($1) and account_id = $2", [[old.body.job_id, fresh.body.job_id], accountId]);
    const byJob = Object.fromEntries(rows.rows.map((r) => [r.job_id, r]));
    expect(byJob[old.body.job_id].payload).toBeNull();
    expect(byJob[old.body.job_id].payload_purged_at).not.toBeNull();
    expect(byJob[fresh.body.job_id].payload).toEqual({ keep: true });
    const schedule = await app.runtime.temporal.client.schedule.getHandle(retentionScheduleId(app.config.temporal.taskQueue)).describe();
    expect(schedule.action).toMatchObject({ type: "startWorkflow", workflowType: "purgePayloads" });
    // The schedule's workflow runs the same activity end to end.
    const n = await app.runtime.temporal.client.workflow.execute("purgePayloads", { taskQueue: app.config.temporal.taskQueue, workflowId: `purge-test-${Date.now()}` });
    expect(n).toBe(0);
  });
});
