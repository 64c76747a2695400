import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstreams.js";
import { createAccount } from "../helpers/graphql.js";
import { allPages, must, newAgent, newTrigger, postWebhook, waitForJob } from "../helpers/ops.js";

// The first call succeeds (and is paid); the second always fails upstream, a transient error that
// Temporal retries: every attempt pays again for what it ran before failing.
const SCRIPT = `export default async function run(input, ctx) {
  await ctx.chat({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "ok " + input.n }] });
  await ctx.chat({ model: "provider_a/model-2.5-flash", messages: [{ role: "user", content: "#fail500 " + input.n }] });
  return "unreachable";
}`;

describe("Job.cost across attempts", () => {
  let fake: FakeUpstream;
  let app: TestApp;
  let admin: string;
  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "a", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "b", UPSTREAM_MAX_RETRIES: "0" } });
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("is everything the run paid over all its attempts: the sum of its ledger rows", async () => {
    const trigger = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "retry", script: SCRIPT }));
    const id = (await postWebhook(app.url, trigger, { n: 1 })).body.job_id;
    const job = await waitForJob(app.url, admin, id, 180_000);
    expect(job.status).toBe("FAILED");
    expect(job.attempts).toBeGreaterThan(1);
    const rows = (
      await allPages<{ amount: string; kind: string; jobId: string | null }>(
        async (after) => (await must(app.url, admin, `query($a: String) { ledger(first: 200, after: $a) { edges { node { amount kind jobId } } pageInfo { hasNextPage endCursor } } }`, { a: after })).ledger,
      )
    ).nodes.filter((r) => r.jobId === id);
    const micros = (usd: string) => Math.round(Number(usd) * 1e6);
    const paid = -rows.reduce((n, r) => n + micros(r.amount), 0);
    expect(paid).toBeGreaterThan(0);
    expect(micros(job.cost)).toBe(paid);
    // Every attempt placed holds (the failing call's hold was handed back in full).
    expect(rows.filter((r) => r.kind === "hold").length).toBeGreaterThanOrEqual(job.attempts + 1);
    const audit = (await must(app.url, admin, `query($id: ID!) { job(id: $id) { audit { toolsUsed { kind status cost } } } }`, { id })).job.audit;
    const statuses = audit.toolsUsed.map((t: { status: string }) => t.status);
    expect(statuses).toContain("ok");
    expect(statuses.at(-1)).toBe("upstream_error");
  }, 200_000);
});
