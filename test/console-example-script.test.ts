import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleScript } from "../web/src/example-script.js";
import { DEFAULT_MODEL } from "../src/config/models.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "./helpers/fake-upstreams.js";
import { gql } from "./helpers/graphql.js";
import { triggerFixture, waitForJobEnd } from "./helpers/jobs.js";
import { postWebhook } from "./helpers/webhooks.js";

/**
 * The console's "Insert example script" as a newcomer's first run (issue 32): its model call is
 * live, so the first test of a trigger shows a cost above zero and a thread, as docs/guides/console.md's
 * walk-through promises.
 */
describe("the console's example script", () => {
  let app: TestApp;
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeUpstream();
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it("a first test run calls the model: the job is done with a cost above zero and a thread", async () => {
    const { adminToken, triggerId, secret } = await triggerFixture(app.url, app.operatorToken, exampleScript(DEFAULT_MODEL));
    const accepted = await postWebhook(app.url, triggerId, JSON.stringify({ order: 42 }), { "x-trigger-secret": secret });
    expect(accepted.status).toBe(202);
    const jobId = accepted.body.job_id as string;
    expect(await waitForJobEnd(app.url, adminToken, jobId)).toBe("DONE");
    const job = (await gql(app.url, adminToken, `query($id: ID!) { job(id: $id) { cost threadId result } }`, { id: jobId })).data!.job;
    expect(Number(job.cost)).toBeGreaterThan(0);
    expect(job.threadId).toMatch(/^thr_/);
    expect(job.result).toMatchObject({ ok: true, received: { order: 42 }, summary: "Hello from A" });
  });
});
