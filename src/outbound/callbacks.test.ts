import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startCallbackReceiver, type Callback, type CallbackReceiver } from "../../test/helpers/callback-receiver.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { makeTestCa, type TestCa } from "../../test/helpers/tls.js";
import { createAgent, gql, postWebhook } from "../../test/helpers/webhooks.js";
import { waitUntil } from "../../test/helpers/worker-process.js";

/**
 * Completion callbacks, black-box: a trigger with a callbackUrl on an HTTPS receiver, jobs started
 * by webhooks, the receiver's view (verified with the `standardwebhooks` package, the reference)
 * and `Job.deliveries`. The receiver is "hooks.test" = 127.0.0.2 (exempt, like a public host);
 * "evil.test" resolves to 127.0.0.1, which the egress rules refuse (EGRESS_ALLOW_PRIVATE off).
 */
describe("completion callbacks", () => {
  let ca: TestCa;
  let hooks: CallbackReceiver;
  let inside: CallbackReceiver;
  let app: TestApp;
  let admin: string;
  let agentId: string;
  let failingAgentId: string;

  beforeAll(async () => {
    ca = makeTestCa(["hooks.test", "evil.test"], ["127.0.0.1", "127.0.0.2"]);
    hooks = await startCallbackReceiver("127.0.0.2", ca);
    inside = await startCallbackReceiver("127.0.0.1", ca);
    app = await startTestApp({
      worker: true,
      env: {
        EGRESS_ALLOW_PRIVATE: "false",
        EGRESS_ALLOW_ADDRESSES: "127.0.0.2",
        EGRESS_RESOLVE: JSON.stringify({ "hooks.test": "127.0.0.2", "evil.test": "127.0.0.1" }),
        EGRESS_CA_FILE: ca.caFile,
        OUTBOUND_RETRY_SCHEDULE: "1,2",
        OUTBOUND_TIMEOUT_MS: "3000",
        OUTBOUND_MAX_RESPONSE_BYTES: "4096",
      },
    });
    ({ adminToken: admin } = await createAccount(app.url, app.operatorToken, "callbacks", "10"));
    agentId = await createAgent(app.url, admin, { name: "echo", script: "export default async function run(input) { return { echo: input }; }" });
    failingAgentId = await createAgent(app.url, admin, { name: "boom", script: "export default async function run() { throw new Error('boom'); }" });
  });
  afterAll(async () => {
    await app?.close();
    await hooks?.close();
    await inside?.close();
    ca?.cleanup();
  });

  const url = (path: string) => `https://hooks.test:${hooks.port}${path}`;

  async function trigger(path: string, agent = agentId): Promise<{ id: string; secret: string; callbackSecret: string }> {
    const r = await gql(app.url, admin, `mutation($a: ID!, $u: String) { createTrigger(agentId: $a, callbackUrl: $u) { trigger { id callbackUrl } secret callbackSecret } }`, { a: agent, u: url(path) });
    expect(r.errors).toBeUndefined();
    expect(r.data.createTrigger.trigger.callbackUrl).toBe(url(path));
    expect(r.data.createTrigger.callbackSecret).toMatch(/^whsec_/);
    return { id: r.data.createTrigger.trigger.id, secret: r.data.createTrigger.secret, callbackSecret: r.data.createTrigger.callbackSecret };
  }

  async function run(t: { id: string; secret: string }, payload: unknown = { hello: "world" }): Promise<string> {
    const r = await postWebhook(app.url, t.id, JSON.stringify(payload), { "x-trigger-secret": t.secret });
    expect(r.status).toBe(202);
    return r.body.job_id;
  }

  async function deliveries(jobId: string): Promise<any[]> {
    const r = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { deliveries { deliveryId webhookId attempt at url statusCode durationMs error responseBytes deliveryStatus } } }`, { id: jobId });
    expect(r.errors).toBeUndefined();
    return r.data.job.deliveries;
  }

  const verify = (secret: string, c: Callback) => new Webhook(secret).verify(c.body, c.headers as Record<string, string>);

  it("POSTs job.done with the result, signed per Standard Webhooks, and logs the attempt", async () => {
    const t = await trigger("/ok-done");
    const jobId = await run(t, { n: 1 });
    await waitUntil(() => hooks.to("/ok-done").length === 1, 60_000, "the callback");
    const c = hooks.to("/ok-done")[0]!;
    expect(verify(t.callbackSecret, c)).toMatchObject({ type: "job.done", data: { job_id: jobId, trigger_id: t.id, status: "done", result: { echo: { n: 1 } } } });
    expect(c.headers["webhook-id"]).toBe(`msg_${jobId}`);
    expect(c.headers["content-type"]).toBe("application/json");
    // The inbound secret does not verify it: the callback secret is its own.
    expect(() => verify(t.secret, c)).toThrow();
    await waitUntil(async () => (await deliveries(jobId)).length === 1 && (await deliveries(jobId))[0].deliveryStatus === "DELIVERED", 30_000, "the log");
    expect((await deliveries(jobId))[0]).toMatchObject({ webhookId: `msg_${jobId}`, attempt: 1, statusCode: 200, error: null, url: url("/ok-done"), responseBytes: 2 });
  });

  it("POSTs job.failed with the error", async () => {
    const t = await trigger("/ok-failed", failingAgentId);
    const jobId = await run(t);
    await waitUntil(() => hooks.to("/ok-failed").length === 1, 60_000, "the callback");
    const event = verify(t.callbackSecret, hooks.to("/ok-failed")[0]!) as any;
    expect(event).toMatchObject({ type: "job.failed", data: { job_id: jobId, status: "failed" } });
    expect(event.data.error).toMatch(/boom/);
    expect(event.data).not.toHaveProperty("result");
  });

  it("retries a 500 with growing gaps and one webhook-id until a 2xx; redeliver sends the same event again", async () => {
    const t = await trigger("/flaky2");
    const jobId = await run(t);
    await waitUntil(() => hooks.to("/flaky2").length === 3, 60_000, "three attempts");
    const [a, b, c] = hooks.to("/flaky2");
    expect(new Set([a, b, c].map((x) => x!.headers["webhook-id"]))).toEqual(new Set([`msg_${jobId}`]));
    expect(new Set([a, b, c].map((x) => x!.body)).size).toBe(1);
    for (const x of [a, b, c]) verify(t.callbackSecret, x!);
    expect(c!.at - b!.at).toBeGreaterThan(b!.at - a!.at); // schedule 1 s then 2 s (±10 % jitter)
    await waitUntil(async () => (await deliveries(jobId)).some((d) => d.deliveryStatus === "DELIVERED"), 30_000, "delivered");
    const log = await deliveries(jobId);
    expect(log.map((d) => [d.attempt, d.statusCode])).toEqual([[1, 500], [2, 500], [3, 200]]);
    expect(log[0].error).toMatch(/HTTP 500/);

    const r = await gql(app.url, admin, `mutation($id: ID!) { redeliver(jobId: $id) { id status } }`, { id: jobId });
    expect(r.errors).toBeUndefined();
    await waitUntil(() => hooks.to("/flaky2").length === 4, 30_000, "the redelivery");
    const again = hooks.to("/flaky2")[3]!;
    expect(again.headers["webhook-id"]).toBe(`msg_${jobId}`);
    expect(again.body).toBe(a!.body);
    await waitUntil(async () => (await deliveries(jobId)).length === 4, 30_000, "the redelivery's log");
    const cycles = new Set((await deliveries(jobId)).map((d) => d.deliveryId));
    expect(cycles.size).toBe(2);
  });

  it("stops when the schedule is spent", async () => {
    const t = await trigger("/fail");
    const jobId = await run(t);
    await waitUntil(async () => (await deliveries(jobId)).some((d) => d.deliveryStatus === "FAILED"), 60_000, "failed");
    expect((await deliveries(jobId)).map((d) => d.attempt)).toEqual([1, 2, 3]);
    expect(hooks.to("/fail")).toHaveLength(3);
  });

  it("refuses a callback host that resolves to a loopback address, records why, and never connects", async () => {
    const r = await gql(app.url, admin, `mutation($a: ID!, $u: String) { createTrigger(agentId: $a, callbackUrl: $u) { trigger { id } secret } }`, { a: agentId, u: `https://evil.test:${inside.port}/steal` });
    expect(r.errors).toBeUndefined();
    const t = r.data.createTrigger;
    const jobId = await run({ id: t.trigger.id, secret: t.secret });
    await waitUntil(async () => (await deliveries(jobId)).some((d) => d.deliveryStatus === "FAILED"), 60_000, "refused");
    const log = await deliveries(jobId);
    expect(log).toHaveLength(1); // a refusal is not retried
    expect(log[0]).toMatchObject({ statusCode: null });
    expect(log[0].error).toMatch(/refused: evil\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(inside.requests).toHaveLength(0);
  });

  it("refuses bad callback URLs with BAD_USER_INPUT", async () => {
    for (const bad of ["not a url", "ftp://hooks.test/x", "http://hooks.test/x", "https://169.254.169.254/latest", "https://10.0.0.1/x", "https://[::1]/x", "https://user:pw@hooks.test/x"]) {
      const r = await gql(app.url, admin, `mutation($a: ID!, $u: String) { createTrigger(agentId: $a, callbackUrl: $u) { trigger { id } } }`, { a: agentId, u: bad });
      expect(r.errors?.[0]?.extensions?.code, bad).toBe("BAD_USER_INPUT");
    }
    const t = await trigger("/ok-update");
    const r = await gql(app.url, admin, `mutation($id: ID!) { updateTrigger(id: $id, callbackUrl: "https://127.0.0.1/x") { id } }`, { id: t.id });
    expect(r.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    // Omitted, the callback URL is left as it is (the description editor sends only the description).
    const kept = await gql(app.url, admin, `mutation($id: ID!) { updateTrigger(id: $id, description: "renamed") { callbackUrl description } }`, { id: t.id });
    expect(kept.data.updateTrigger).toEqual({ callbackUrl: url("/ok-update"), description: "renamed" });
    const cleared = await gql(app.url, admin, `mutation($id: ID!) { updateTrigger(id: $id, callbackUrl: null) { callbackUrl description } }`, { id: t.id });
    expect(cleared.data.updateTrigger.callbackUrl).toBeNull();
  });

  it("a receiver that never answers or streams for ever is cut off and logged, while a good one is served at once", async () => {
    const hang = await trigger("/hang");
    const stream = await trigger("/stream");
    const good = await trigger("/ok-beside");
    const hangJob = await run(hang);
    const streamJob = await run(stream);
    await waitUntil(() => hooks.to("/hang").length === 1 && hooks.to("/stream").length === 1, 60_000, "the slow receivers reached");
    const goodJob = await run(good);
    await waitUntil(() => hooks.to("/ok-beside").length === 1, 60_000, "the good callback");
    // The good delivery did not wait for the hanging one: that attempt is still in flight.
    expect(await deliveries(hangJob)).toHaveLength(0);
    await waitUntil(async () => (await deliveries(goodJob)).length === 1, 30_000, "the good log");
    await waitUntil(async () => (await deliveries(hangJob)).length >= 1, 30_000, "the hang's timeout");
    expect((await deliveries(hangJob))[0]).toMatchObject({ statusCode: null });
    expect((await deliveries(hangJob))[0].error).toMatch(/did not answer within 3000 ms/);
    await waitUntil(async () => (await deliveries(streamJob)).length >= 1, 30_000, "the stream's attempt");
    expect((await deliveries(streamJob))[0]).toMatchObject({ statusCode: 200, responseBytes: 4096, deliveryStatus: "DELIVERED" });
  });

  it("signs with the old and the new secret during the grace after rotateCallbackSecret; sendTestCallback sends a signed test event", async () => {
    const t = await trigger("/ok-rotate");
    const r = await gql(app.url, admin, `mutation($id: ID!) { rotateCallbackSecret(id: $id) { secret previousSecretExpiresAt } }`, { id: t.id });
    expect(r.errors).toBeUndefined();
    const fresh = r.data.rotateCallbackSecret.secret;
    const shown = await gql(app.url, admin, `query($id: ID!) { trigger(id: $id) { callbackSecret } }`, { id: t.id });
    expect(shown.data.trigger.callbackSecret).toBe(fresh);
    const test = await gql(app.url, admin, `mutation($id: ID!) { sendTestCallback(triggerId: $id) { webhookId attempts { statusCode error } } }`, { id: t.id });
    expect(test.errors).toBeUndefined();
    expect(test.data.sendTestCallback.attempts).toEqual([{ statusCode: 200, error: null }]);
    const c = hooks.to("/ok-rotate")[0]!;
    expect(String(c.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verify(fresh, c)).toMatchObject({ type: "test", data: { trigger_id: t.id } });
    expect(verify(t.callbackSecret, c)).toMatchObject({ type: "test" });
    expect(c.headers["webhook-id"]).toBe(test.data.sendTestCallback.webhookId);
  });
});
