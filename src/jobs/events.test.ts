import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, postWebhook, waitForJob } from "../../test/helpers/webhooks.js";

const SUB = `subscription($jobId: ID, $triggerId: ID, $agentId: ID) {
  jobStatusChanged(jobId: $jobId, triggerId: $triggerId, agentId: $agentId) { jobId triggerId agentId status error attempts at }
}`;

interface Event {
  jobId: string;
  triggerId: string;
  agentId: string;
  status: string;
}

/** Collects events of one subscription until stopped. */
function collect(client: Client, variables: Record<string, unknown>): { events: Event[]; errors: unknown[]; ready: Promise<void>; stop(): void } {
  const events: Event[] = [];
  const errors: unknown[] = [];
  let stop = () => {};
  const ready = new Promise<void>((resolve) => {
    stop = client.subscribe<{ jobStatusChanged: Event }>(
      { query: SUB, variables },
      {
        next: (m) => {
          if (m.data) events.push(m.data.jobStatusChanged);
          if (m.errors) errors.push(m.errors);
        },
        error: (e) => errors.push(e),
        complete: () => {},
      },
    );
    // graphql-ws has no "subscribed" ack; give the server a moment to register the operation.
    setTimeout(resolve, 300);
  });
  return { events, errors, ready, stop: () => stop() };
}

describe("jobStatusChanged over graphql-ws across API instances", () => {
  let a: TestApp;
  let b: TestApp;
  const clients: Client[] = [];
  const ws = (app: TestApp, token: string) => {
    const c = createClient({ url: `${app.url.replace(/^http/, "ws")}/graphql`, connectionParams: { authorization: `Bearer ${token}` }, lazy: false, retryAttempts: 0 });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    a = await startTestApp({ worker: true });
    b = await startTestApp({ databaseUrl: a.databaseUrl, taskQueue: a.config.temporal.taskQueue, operatorToken: a.operatorToken, secretEncryptionKey: a.config.secretEncryptionKey.toString("base64") });
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await b?.close();
    await a?.close();
  });

  it("delivers every transition to the owning account's subscribers on the other instance, and nothing to another account", async () => {
    const owner = await createAccount(a.url, a.operatorToken, "owner");
    const stranger = await createAccount(a.url, a.operatorToken, "stranger");
    const agent = await createAgent(a.url, owner.adminToken, { name: "live", script: "export default async function run(i) { return i; }" });
    const t = await createTrigger(a.url, owner.adminToken, agent);
    const other = await createTrigger(a.url, owner.adminToken, agent, "other");

    const onB = collect(ws(b, owner.adminToken), { triggerId: t.id });
    const byAgentOnA = collect(ws(a, owner.adminToken), { agentId: agent });
    const strangerAll = collect(ws(b, stranger.adminToken), {});
    const strangerByTrigger = collect(ws(a, stranger.adminToken), { triggerId: t.id });
    await Promise.all([onB.ready, byAgentOnA.ready, strangerAll.ready, strangerByTrigger.ready]);

    const r = await postWebhook(a.url, t.id, JSON.stringify({ x: 1 }), { "x-trigger-secret": t.secret });
    const r2 = await postWebhook(a.url, other.id, "{}", { "x-trigger-secret": other.secret });
    await waitForJob(a.url, r.body.job_id, { "x-trigger-secret": t.secret });
    await waitForJob(a.url, r2.body.job_id, { "x-trigger-secret": other.secret });
    const deadline = Date.now() + 5000;
    while ((onB.events.length < 3 || byAgentOnA.events.length < 6) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));

    expect(onB.errors).toEqual([]);
    // QUEUED is sent too (issue 12 item 4).
    expect(onB.events.map((e) => [e.jobId, e.status])).toEqual([
      [r.body.job_id, "QUEUED"],
      [r.body.job_id, "RUNNING"],
      [r.body.job_id, "DONE"],
    ]);
    expect(onB.events[0]).toMatchObject({ triggerId: t.id, agentId: agent });
    expect(byAgentOnA.events.filter((e) => e.jobId === r2.body.job_id).map((e) => e.status)).toEqual(["QUEUED", "RUNNING", "DONE"]);
    await new Promise((res) => setTimeout(res, 300));
    expect(strangerAll.events).toEqual([]);
    expect(strangerByTrigger.events).toEqual([]);
  });

  it("refuses sockets without a valid admin token", async () => {
    const bad = createClient({ url: `${b.url.replace(/^http/, "ws")}/graphql`, connectionParams: { authorization: "Bearer adm_nope" }, retryAttempts: 0 });
    clients.push(bad);
    const closed = await new Promise<unknown>((resolve) => {
      bad.subscribe({ query: SUB, variables: {} }, { next: () => {}, error: resolve, complete: () => resolve("complete") });
    });
    expect((closed as { code?: number }).code).toBe(4403);
  });
});
