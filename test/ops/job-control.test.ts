import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { must, newAgent, newTrigger, postWebhook, waitForJob } from "../helpers/ops.js";
import { startWorker } from "../../src/temporal/worker.js";

const ECHO = `export default async function run(input, ctx) { ctx.log("echo"); return { echoed: input }; }`;
const LOOP = `export default async function run(input, ctx) { for (;;) {} }`;
const JOB = `id status error attempts replayOf { id status } audit { payload payloadPurgedAt result }`;

/** cancelJob, replayJob and the failed-jobs view, black-box through GraphQL (docs/guides/graphql.md). */
describe("job control", () => {
  let app: TestApp;
  let admin: string;
  let echo: { id: string; secret: string };
  let loop: { id: string; secret: string };
  const job = async (id: string) => (await must(app.url, admin, `query($id: ID!) { job(id: $id) { ${JOB} } }`, { id })).job;
  const cancel = (id: string) => gql(app.url, admin, `mutation($id: ID!) { cancelJob(id: $id) { ${JOB} } }`, { id });
  const replay = (id: string) => gql(app.url, admin, `mutation($id: ID!) { replayJob(id: $id) { ${JOB} } }`, { id });

  beforeAll(async () => {
    // One sandbox thread and scripts that may run for ten minutes: a script that cancelJob did not
    // stop would hold the only thread, and the next run could not finish within the test.
    app = await startTestApp({ worker: true, env: { SANDBOX_POOL_SIZE: "1", SCRIPT_TIMEOUT_MS: "600000", SCRIPT_WALL_TIME_MS: "600000", SCRIPT_CPU_TIME_MS: "600000" } });
    admin = (await createAccount(app.url, app.operatorToken, "acme", "10")).adminToken;
    echo = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "echo", script: ECHO }));
    loop = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "loop", script: LOOP }));
  });
  afterAll(async () => app?.close());

  it("replayJob: a new job with the same payload, linked by replayOf, run to the same result", async () => {
    const first = await postWebhook(app.url, echo, { order: 42 });
    const done = await waitForJob(app.url, admin, first.body.job_id);
    expect(done.status).toBe("DONE");
    const r = await replay(first.body.job_id);
    expect(r.errors).toBeUndefined();
    const replayed = r.data!.replayJob;
    expect(replayed.id).not.toBe(first.body.job_id);
    expect(replayed.status).toBe("QUEUED");
    expect(replayed.replayOf).toEqual({ id: first.body.job_id, status: "DONE" });
    expect(replayed.audit.payload).toEqual({ order: 42 });
    await waitForJob(app.url, admin, replayed.id);
    expect((await job(replayed.id)).audit.result).toEqual({ echoed: { order: 42 } });
    expect((await gql(app.url, admin, `mutation { replayJob(id: "job_nope") { id } }`)).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });

  it("cancelJob on a running script: FAILED with error cancelled at once, the script is stopped (the only sandbox thread runs the next job)", async () => {
    const posted = await postWebhook(app.url, loop, { spin: true });
    const id = posted.body.job_id;
    for (let i = 0; (await job(id)).status !== "RUNNING"; i++) {
      expect(i).toBeLessThan(600);
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await cancel(id);
    expect(r.errors).toBeUndefined();
    expect(r.data!.cancelJob).toMatchObject({ id, status: "FAILED", error: "cancelled" });
    const next = await postWebhook(app.url, echo, { after: "cancel" });
    expect((await waitForJob(app.url, admin, next.body.job_id, 120_000)).status).toBe("DONE");
    const handle = app.runtime.temporal.client.workflow.getHandle(id);
    await handle.result().catch(() => undefined);
    expect((await handle.describe()).status.name).toBe("CANCELLED");
    expect(await job(id)).toMatchObject({ status: "FAILED", error: "cancelled" });
    // A finished job cannot be cancelled; it can be replayed (the failed-jobs view offers that).
    expect((await cancel(id)).errors?.[0]?.extensions).toMatchObject({ code: "CONFLICT" });
    const failed = await must(app.url, admin, `{ jobs(filter: { status: FAILED }) { edges { node { id error } } } }`);
    expect(failed.jobs.edges.map((e: { node: { id: string } }) => e.node.id)).toContain(id);
  });

  it("cancelJob on a queued job: it never runs, even when a worker comes later", async () => {
    const idle = await startTestApp({ databaseUrl: app.databaseUrl, operatorToken: app.operatorToken, secretEncryptionKey: app.config.secretEncryptionKey.toString("base64") });
    try {
      // This instance's task queue has no worker yet: the job stays queued.
      const posted = await postWebhook(idle.url, echo, { never: true });
      const id = posted.body.job_id;
      const r = await gql(idle.url, admin, `mutation($id: ID!) { cancelJob(id: $id) { status error } }`, { id });
      expect(r.data!.cancelJob).toEqual({ status: "FAILED", error: "cancelled" });
      const worker = await startWorker(idle.runtime);
      try {
        const handle = idle.runtime.temporal.client.workflow.getHandle(id);
        await handle.result().catch(() => undefined);
        expect((await handle.describe()).status.name).toBe("CANCELLED");
      } finally {
        await worker.shutdown();
      }
      expect(await job(id)).toMatchObject({ status: "FAILED", error: "cancelled", audit: { result: null } });
    } finally {
      await idle.close();
    }
  });

  it("unknown or foreign ids answer NOT_FOUND", async () => {
    const other = (await createAccount(app.url, app.operatorToken, "other", "1")).adminToken;
    const posted = await postWebhook(app.url, echo, { mine: true });
    for (const op of ["cancelJob", "replayJob"]) {
      const r = await gql(app.url, other, `mutation($id: ID!) { ${op}(id: $id) { id } }`, { id: posted.body.job_id });
      expect(r.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    }
    await waitForJob(app.url, admin, posted.body.job_id);
  });
});
