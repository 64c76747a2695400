import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "graphql-ws";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createAccount } from "../helpers/graphql.js";
import { newAgent, newTrigger, postWebhook, waitForJob } from "../helpers/ops.js";

const SUB = `subscription($jobId: ID, $triggerId: ID) { jobStatusChanged(jobId: $jobId, triggerId: $triggerId) { jobId status attempts } }`;
const SCRIPT = `export default async function run(input, ctx) { return { n: input.n }; }`;
interface Event {
  jobId: string;
  status: string;
  attempts: number;
}

/** jobStatusChanged sends QUEUED, and for one jobId the current state first (docs/guides/graphql.md). */
describe("jobStatusChanged: QUEUED and the current state first", () => {
  let app: TestApp;
  let other: TestApp;
  let admin: string;
  let trigger: { id: string; secret: string };
  const clients: Client[] = [];
  const listen = (url: string, variables: Record<string, unknown>, until: (events: Event[]) => boolean) => {
    const c = createClient({ url: `${url.replace(/^http/, "ws")}/graphql`, connectionParams: { authorization: `Bearer ${admin}` }, retryAttempts: 0 });
    clients.push(c);
    const events: Event[] = [];
    let first!: () => void;
    const heard = new Promise<void>((r) => (first = r));
    const done = new Promise<Event[]>((resolve, reject) => {
      const stop = c.subscribe<{ jobStatusChanged: Event }>(
        { query: SUB, variables },
        {
          next: (v) => {
            events.push(v.data!.jobStatusChanged);
            first();
            if (until(events)) (stop(), resolve(events));
          },
          error: reject,
          complete: () => resolve(events),
        },
      );
    });
    return { events, heard, done };
  };
  const terminal = (events: Event[]) => ["DONE", "FAILED"].includes(events.at(-1)?.status ?? "");

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    other = await startTestApp({ databaseUrl: app.databaseUrl, operatorToken: app.operatorToken, secretEncryptionKey: app.config.secretEncryptionKey.toString("base64") });
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    trigger = await newTrigger(app.url, admin, await newAgent(app.url, admin, { script: SCRIPT }));
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await other?.close();
    await app?.close();
  });

  it("subscribed before the webhook (on another instance): QUEUED, RUNNING, DONE in order", async () => {
    let real: string | undefined;
    const sub = listen(other.url, { triggerId: trigger.id }, (events) => !!real && events.some((e) => e.jobId === real && e.status === "DONE"));
    // The subscription is surely live once it has heard something: warm up until it does.
    while (sub.events.length === 0) {
      await waitForJob(app.url, admin, (await postWebhook(app.url, trigger, { n: 0 })).body.job_id);
      await Promise.race([sub.heard, new Promise((r) => setTimeout(r, 200))]);
    }
    const posted = await postWebhook(app.url, trigger, { n: 1 });
    expect(posted.status).toBe(202);
    real = posted.body.job_id;
    const events = (await sub.done).filter((e) => e.jobId === real);
    // RUNNING may come once per attempt number the run records (each with a higher attempts).
    expect(events.map((e) => e.status).filter((s, i, all) => s !== all[i - 1])).toEqual(["QUEUED", "RUNNING", "DONE"]);
    const running = events.filter((e) => e.status === "RUNNING").map((e) => e.attempts);
    expect([...running].sort()).toEqual(running);
    expect(new Set(running).size).toBe(running.length);
  });

  it("subscribed to a job after it finished: the terminal event arrives at once", async () => {
    const posted = await postWebhook(app.url, trigger, { n: 2 });
    await waitForJob(app.url, admin, posted.body.job_id);
    const events = await listen(other.url, { jobId: posted.body.job_id }, () => true).done;
    expect(events).toEqual([{ jobId: posted.body.job_id, status: "DONE", attempts: 1 }]);
  });

  it("subscribed to a job while it runs: its current state, then the rest, in order, each once", async () => {
    for (let i = 0; i < 8; i++) {
      const posted = await postWebhook(app.url, trigger, { n: 10 + i });
      const events = await listen(i % 2 ? other.url : app.url, { jobId: posted.body.job_id }, terminal).done;
      // In order (status, then attempt number), and nothing twice.
      const order = events.map((e) => ["QUEUED", "RUNNING", "DONE"].indexOf(e.status) * 1000 + e.attempts);
      expect(events.every((e) => ["QUEUED", "RUNNING", "DONE"].includes(e.status))).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(new Set(order).size).toBe(order.length);
      expect(events.at(-1)!.status).toBe("DONE");
    }
  });

  it("another account's job id sends nothing", async () => {
    const posted = await postWebhook(app.url, trigger, { n: 3 });
    await waitForJob(app.url, admin, posted.body.job_id);
    const stranger = (await createAccount(app.url, app.operatorToken, "stranger", "1")).adminToken;
    const c = createClient({ url: `${app.url.replace(/^http/, "ws")}/graphql`, connectionParams: { authorization: `Bearer ${stranger}` }, retryAttempts: 0 });
    clients.push(c);
    const got: unknown[] = [];
    const stop = c.subscribe({ query: SUB, variables: { jobId: posted.body.job_id } }, { next: (v) => got.push(v), error: () => {}, complete: () => {} });
    // Give the snapshot every chance to (wrongly) arrive: a whole later job runs meanwhile.
    await waitForJob(app.url, admin, (await postWebhook(app.url, trigger, { n: 4 })).body.job_id);
    stop();
    expect(got).toEqual([]);
  });
});
