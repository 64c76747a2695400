import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { clock, GRACE_MS } from "../triggers/clock.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, waitForJob, type CreatedTrigger } from "../../test/helpers/webhooks.js";

const SCRIPT = `export default async function run(input, ctx) { ctx.log("got", input.n); return { doubled: input.n * 2 }; }`;

describe("POST /api/triggers/:id/webhook", () => {
  let app: TestApp;
  let admin: string;
  let agentId: string;
  let trg: CreatedTrigger;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    admin = (await createAccount(app.url, app.operatorToken, "acme")).adminToken;
    agentId = await createAgent(app.url, admin, { name: "doubler", script: SCRIPT });
    trg = await createTrigger(app.url, admin, agentId, "orders");
  });
  afterAll(async () => app?.close());

  const secretHeader = () => ({ "x-trigger-secret": trg.secret });

  it("issues a whsec_ secret, the webhook URL and ready-to-run test commands", () => {
    expect(trg.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(trg.secret.slice(6), "base64")).toHaveLength(32);
    expect(trg.webhookUrl).toBe(`${app.config.publicBaseUrl}/api/triggers/${trg.id}/webhook`);
    // PORT=0 binds a free port; without PUBLIC_BASE_URL the URL names that port, so it works as given.
    expect(trg.webhookUrl).toBe(`${app.url}/api/triggers/${trg.id}/webhook`);
    expect(trg.testCommand).toContain(trg.webhookUrl);
    expect(trg.testCommand).toContain(`x-trigger-secret: ${trg.secret}`);
    expect(trg.signedTestCommand).toContain("X-Service-Signature");
  });

  it("accepts with x-trigger-secret: 202 queued, then the run is done with the script's result", async () => {
    const r = await postWebhook(app.url, trg.id, JSON.stringify({ n: 21 }), secretHeader());
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ job_id: expect.stringMatching(/^job_/), status: "queued" });
    const status = await waitForJob(app.url, r.body.job_id, secretHeader());
    expect(status).toMatchObject({ job_id: r.body.job_id, status: "done", attempts: 1 });
    expect(status.started_at).toBeTruthy();
    expect(status.finished_at).toBeTruthy();
    const result = await getJson(`${app.url}/api/agent-run-jobs/${r.body.job_id}/result`, secretHeader());
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ job_id: r.body.job_id, status: "done", result: { doubled: 42 } });
    const run = await getJson(`${app.url}/api/runs/${r.body.job_id}`, { authorization: `Bearer ${admin}` });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ job_id: r.body.job_id, status: "done", trigger_id: trg.id, agent_id: agentId, result: { doubled: 42 }, error: null, cost: "0.000000", logs: ["got 21"] });
  });

  it("415 for anything but JSON, multipart included", async () => {
    for (const ct of ["text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded"]) {
      const r = await postWebhook(app.url, trg.id, "{}", { ...secretHeader(), "content-type": ct });
      expect(r.status, ct).toBe(415);
      expect(r.body.error.code).toBe("unsupported_media_type");
    }
    const ok = await postWebhook(app.url, trg.id, "{}", { ...secretHeader(), "content-type": "application/json; charset=utf-8" });
    expect(ok.status).toBe(202);
  });

  it("1 MB boundary: 1,048,576 bytes → 202, one byte more → 413", async () => {
    const body = (size: number) => {
      const base = '{"pad":""}';
      return `{"pad":"${"x".repeat(size - base.length)}"}`;
    };
    expect(Buffer.byteLength(body(1_048_576))).toBe(1_048_576);
    const under = await postWebhook(app.url, trg.id, body(1_048_576), secretHeader());
    expect(under.status).toBe(202);
    const over = await postWebhook(app.url, trg.id, body(1_048_577), secretHeader());
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe("payload_too_large");
  });

  it("413 for a chunked body (no Content-Length) as soon as it passes 1 MB", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${app.url}/api/triggers/${trg.id}/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked", ...secretHeader() },
      });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
      req.write('{"pad":"');
      for (let i = 0; i < 20; i++) req.write("x".repeat(64 * 1024));
      req.end('"}');
    });
    expect(status).toBe(413);
  });

  it("400 invalid_json, 404 unknown trigger, 401 missing or wrong credentials", async () => {
    const bad = await postWebhook(app.url, trg.id, "{not json", secretHeader());
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_json");
    const unknown = await postWebhook(app.url, "trg_doesnotexist", "{}", secretHeader());
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("trigger_not_found");
    const none = await postWebhook(app.url, trg.id, "{}");
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("invalid_credentials");
    const wrong = await postWebhook(app.url, trg.id, "{}", { "x-trigger-secret": `${trg.secret}x` });
    expect(wrong.status).toBe(401);
  });

  it("403 trigger_inactive while deactivated; accepted again after activation", async () => {
    const off = await gql(app.url, admin, `mutation($id: ID!) { setTriggerActive(id: $id, active: false) { active } }`, { id: trg.id });
    expect(off.data.setTriggerActive.active).toBe(false);
    const r = await postWebhook(app.url, trg.id, "{}", secretHeader());
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("trigger_inactive");
    await gql(app.url, admin, `mutation($id: ID!) { setTriggerActive(id: $id, active: true) { active } }`, { id: trg.id });
    expect((await postWebhook(app.url, trg.id, "{}", secretHeader())).status).toBe(202);
  });

  it("X-Service-Signature: hex, sha256=hex and base64 with a timestamp; stale or missing timestamp → 401", async () => {
    const body = JSON.stringify({ n: 1 });
    const ts = Math.floor(Date.now() / 1000);
    const mac = (content: string) => createHmac("sha256", trg.secret).update(content);
    const hex = mac(`${ts}.${body}`).digest("hex");
    for (const sig of [hex, `sha256=${hex}`, mac(`${ts}.${body}`).digest("base64")]) {
      const r = await postWebhook(app.url, trg.id, body, { "x-service-signature": sig, "x-service-timestamp": String(ts) });
      expect(r.status, sig).toBe(202);
    }
    const stale = ts - 301;
    const staleSig = mac(`${stale}.${body}`).digest("hex");
    expect((await postWebhook(app.url, trg.id, body, { "x-service-signature": staleSig, "x-service-timestamp": String(stale) })).status).toBe(401);
    const tampered = await postWebhook(app.url, trg.id, JSON.stringify({ n: 2 }), { "x-service-signature": hex, "x-service-timestamp": String(ts) });
    expect(tampered.status).toBe(401);
    // Without a timestamp: refused unless the account relaxed the requirement.
    const bare = mac(body).digest("hex");
    expect((await postWebhook(app.url, trg.id, body, { "x-service-signature": bare })).status).toBe(401);
  });

  it("each 401 names its reason class (missing credentials, secret or signature mismatch, timestamp outside ±300 s, timestamp required) and never the expected signature", async () => {
    const body = JSON.stringify({ n: 9 });
    const ts = Math.floor(Date.now() / 1000);
    const mac = (content: string) => createHmac("sha256", trg.secret).update(content).digest("hex");
    const wh = new Webhook(trg.secret);
    const signedStd = { "webhook-id": "msg_reason", "webhook-timestamp": String(ts), "webhook-signature": wh.sign("msg_reason", new Date(ts * 1000), body) };
    const staleStd = { "webhook-id": "msg_old", "webhook-timestamp": String(ts - 1000), "webhook-signature": wh.sign("msg_old", new Date((ts - 1000) * 1000), body) };
    const cases: [string, string, Record<string, string>, string, RegExp][] = [
      ["none", body, {}, "missing_credentials", /^Missing credentials: send X-Trigger-Secret/],
      ["wrong secret", body, { "x-trigger-secret": `${trg.secret}x` }, "secret_mismatch", /^X-Trigger-Secret does not match/],
      ["re-formatted body", JSON.stringify({ n: 9 }, null, 2), { "x-service-signature": mac(`${ts}.${body}`), "x-service-timestamp": String(ts) }, "signature_mismatch", /^Signature mismatch: sign the exact bytes/],
      ["re-formatted body (Standard Webhooks)", JSON.stringify({ n: 9 }, null, 2), signedStd, "signature_mismatch", /^Signature mismatch/],
      ["1,000 s old", body, { "x-service-signature": mac(`${ts - 1000}.${body}`), "x-service-timestamp": String(ts - 1000) }, "timestamp_outside_tolerance", /outside ±300 s/],
      ["1,000 s old (Standard Webhooks)", body, staleStd, "timestamp_outside_tolerance", /outside ±300 s/],
      ["no timestamp", body, { "x-service-signature": mac(body) }, "timestamp_required", /^Signature timestamp required: send X-Service-Timestamp/],
      ["no timestamp (Standard Webhooks)", body, { "webhook-id": "m", "webhook-signature": signedStd["webhook-signature"] }, "timestamp_required", /^Signature timestamp required/],
    ];
    for (const [name, sent, headers, reason, message] of cases) {
      const r = await postWebhook(app.url, trg.id, sent, headers);
      expect(r.status, name).toBe(401);
      expect(r.body.error, name).toMatchObject({ code: "invalid_credentials", reason });
      expect(r.body.error.message, name).toMatch(message);
      // Neither the secret nor the signature the server computed appears anywhere in the answer.
      const text = JSON.stringify(r.body);
      for (const secretish of [trg.secret, mac(`${ts}.${sent}`), mac(sent)]) expect(text, name).not.toContain(secretish);
    }
  });

  it("X-Service-Signature without a timestamp is accepted for an account that relaxed the requirement", async () => {
    const other = await createAccount(app.url, app.operatorToken, "relaxed");
    const s = await gql(app.url, other.adminToken, `mutation { updateAccountSettings(input: { relaxSignatureTimestamp: true }) { relaxSignatureTimestamp } }`);
    expect(s.data.updateAccountSettings.relaxSignatureTimestamp).toBe(true);
    const agent = await createAgent(app.url, other.adminToken, { name: "a", script: SCRIPT });
    const t = await createTrigger(app.url, other.adminToken, agent);
    const body = JSON.stringify({ n: 3 });
    const r = await postWebhook(app.url, t.id, body, { "x-service-signature": createHmac("sha256", t.secret).update(body).digest("hex") });
    expect(r.status).toBe(202);
  });

  it("Standard Webhooks headers signed by the standardwebhooks package", async () => {
    const body = JSON.stringify({ n: 5 });
    const wh = new Webhook(trg.secret);
    const msgId = `msg_${Date.now()}`;
    const now = new Date();
    const headers = { "webhook-id": msgId, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": wh.sign(msgId, now, body) };
    const r = await postWebhook(app.url, trg.id, body, headers);
    expect(r.status).toBe(202);
    const status = await waitForJob(app.url, r.body.job_id, secretHeader());
    expect(status.status).toBe("done");
    const forged = await postWebhook(app.url, trg.id, JSON.stringify({ n: 6 }), { ...headers, "webhook-id": `${msgId}-2` });
    expect(forged.status).toBe(401);
  });

  it("Idempotency-Key and webhook-id: the same key within 24 h returns the first job and starts nothing new", async () => {
    const key = `order-${Date.now()}`;
    const first = await postWebhook(app.url, trg.id, JSON.stringify({ n: 7 }), { ...secretHeader(), "idempotency-key": key });
    const again = await Promise.all([1, 2, 3].map(() => postWebhook(app.url, trg.id, JSON.stringify({ n: 8 }), { ...secretHeader(), "idempotency-key": key })));
    expect(first.status).toBe(202);
    for (const r of again) {
      expect(r.status).toBe(202);
      expect(r.body.job_id).toBe(first.body.job_id);
    }
    const { rows } = await app.runtime.pool.query("select count(*)::int as n from idempotency_records where key = $1", [key]);
    expect(rows[0].n).toBe(1);
    const audits = await app.runtime.pool.query("select count(*)::int as n from audit_entries where job_id = $1", [first.body.job_id]);
    expect(audits.rows[0].n).toBe(1);
    // Same key on a concurrent burst of new requests: exactly one job.
    const burstKey = `burst-${Date.now()}`;
    const burst = await Promise.all(Array.from({ length: 10 }, () => postWebhook(app.url, trg.id, "{}", { ...secretHeader(), "idempotency-key": burstKey })));
    expect(new Set(burst.map((r) => r.body.job_id)).size).toBe(1);
  });

  it("rotation: the old secret keeps working for 24 hours, then stops (controllable clock)", async () => {
    const agent = await createAgent(app.url, admin, { name: "rot", script: SCRIPT });
    const t = await createTrigger(app.url, admin, agent);
    const rotated = await gql(app.url, admin, `mutation($id: ID!) { rotateTriggerSecret(id: $id) { secret previousSecretExpiresAt } }`, { id: t.id });
    const { secret, previousSecretExpiresAt } = rotated.data.rotateTriggerSecret;
    expect(secret).not.toBe(t.secret);
    expect(Math.abs(Date.parse(previousSecretExpiresAt) - (Date.now() + GRACE_MS))).toBeLessThan(60_000);
    const old = await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret });
    expect(old.status).toBe(202);
    // The job endpoints accept the grace secret too.
    expect((await getJson(`${app.url}/api/agent-run-jobs/${old.body.job_id}/status`, { "x-trigger-secret": t.secret })).status).toBe(200);
    expect((await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": secret })).status).toBe(202);
    const copied = await gql(app.url, admin, `query($id: ID!) { trigger(id: $id) { secret } }`, { id: t.id });
    expect(copied.data.trigger.secret).toBe(secret);

    const realNow = clock.now;
    try {
      clock.now = () => realNow() + GRACE_MS + 1000;
      expect((await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret })).status).toBe(401);
      expect((await getJson(`${app.url}/api/agent-run-jobs/${old.body.job_id}/status`, { "x-trigger-secret": t.secret })).status).toBe(404);
      expect((await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": secret })).status).toBe(202);
    } finally {
      clock.now = realNow;
    }

    // A custom secret: 24–256 printable characters, same grace rule.
    const short = await gql(app.url, admin, `mutation($id: ID!) { setTriggerSecret(id: $id, secret: "tooshort") { id } }`, { id: t.id });
    expect(short.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const custom = "my-own-secret-with-enough-length!";
    const set = await gql(app.url, admin, `mutation($id: ID!, $s: String!) { setTriggerSecret(id: $id, secret: $s) { id } }`, { id: t.id, s: custom });
    expect(set.errors).toBeUndefined();
    expect((await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": custom })).status).toBe(202);
    expect((await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": secret })).status).toBe(202);
  });
});

describe("job endpoints and transport rules", () => {
  let app: TestApp;
  let idle: TestApp;
  let strict: TestApp;
  let admin: string;
  let otherAdmin: string;
  let trg: CreatedTrigger;

  beforeAll(async () => {
    app = await startTestApp({ worker: true });
    // Same database, a task queue without a worker: its jobs stay queued.
    idle = await startTestApp({ databaseUrl: app.databaseUrl, operatorToken: app.operatorToken, secretEncryptionKey: app.config.secretEncryptionKey.toString("base64") });
    strict = await startTestApp({
      databaseUrl: app.databaseUrl,
      operatorToken: app.operatorToken,
      secretEncryptionKey: app.config.secretEncryptionKey.toString("base64"),
      env: { ALLOW_INSECURE_HTTP: "false", TRUST_PROXY: "loopback" },
    });
    admin = (await createAccount(app.url, app.operatorToken, "jobs")).adminToken;
    otherAdmin = (await createAccount(app.url, app.operatorToken, "other")).adminToken;
    const agent = await createAgent(app.url, admin, { name: "j", script: `export default async function run(input) { if (input.fail) throw new Error("bad input: " + input.fail); return { ok: true }; }` });
    trg = await createTrigger(app.url, admin, agent);
  });
  afterAll(async () => {
    await strict?.close();
    await idle?.close();
    await app?.close();
  });

  it("409 job_not_finished (with the status) while queued; status answers for secret and admin token; others get 404", async () => {
    const r = await postWebhook(idle.url, trg.id, "{}", { "x-trigger-secret": trg.secret });
    expect(r.status).toBe(202);
    const id = r.body.job_id;
    const result = await getJson(`${idle.url}/api/agent-run-jobs/${id}/result`, { "x-trigger-secret": trg.secret });
    expect(result.status).toBe(409);
    expect(result.body.error).toMatchObject({ code: "job_not_finished", status: "queued" });
    const status = await getJson(`${idle.url}/api/agent-run-jobs/${id}/status`, { authorization: `Bearer ${admin}` });
    expect(status.status).toBe(200);
    expect(Object.keys(status.body).sort()).toEqual(["attempts", "created_at", "finished_at", "job_id", "started_at", "status"]);
    const attempts: Record<string, string>[] = [{}, { "x-trigger-secret": "whsec_wrong" }, { authorization: `Bearer ${otherAdmin}` }, { authorization: `Bearer ${app.operatorToken}` }];
    for (const headers of attempts) {
      for (const path of [`/api/agent-run-jobs/${id}/status`, `/api/agent-run-jobs/${id}/result`, `/api/runs/${id}`]) {
        const res = await getJson(`${idle.url}${path}`, headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(404);
        expect(res.body.error.code).toBe("job_not_found");
      }
    }
    const unknown = await getJson(`${idle.url}/api/agent-run-jobs/job_unknown/status`, { authorization: `Bearer ${admin}` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("job_not_found");
  });

  it("a script error fails the job with its message: status, result, runs, trigger logs and job(id)", async () => {
    const r = await postWebhook(app.url, trg.id, JSON.stringify({ fail: "no customer" }), { "x-trigger-secret": trg.secret });
    const status = await waitForJob(app.url, r.body.job_id, { "x-trigger-secret": trg.secret });
    expect(status.status).toBe("failed");
    expect(status.error).toContain("bad input: no customer");
    expect(status.attempts).toBe(1); // non-retryable
    const result = await getJson(`${app.url}/api/agent-run-jobs/${r.body.job_id}/result`, { "x-trigger-secret": trg.secret });
    expect(result.body).toMatchObject({ status: "failed", error: expect.stringContaining("no customer") });
    const logs = await gql(app.url, admin, `query($id: ID!) { trigger(id: $id) { logs(first: 5) { jobId time status durationMs threadId error } agent { name triggers { id } } } }`, { id: trg.id });
    expect(logs.data.trigger.logs[0]).toMatchObject({ jobId: r.body.job_id, status: "FAILED", error: expect.stringContaining("no customer") });
    expect(logs.data.trigger.agent.triggers.map((t: { id: string }) => t.id)).toContain(trg.id);
    const job = await gql(app.url, admin, `query($id: ID!) { job(id: $id) { id status error attempts cost triggerId } }`, { id: r.body.job_id });
    expect(job.data.job).toMatchObject({ id: r.body.job_id, status: "FAILED", triggerId: trg.id, cost: "0.000000" });
    const foreign = await gql(app.url, otherAdmin, `query($id: ID!) { job(id: $id) { id } }`, { id: r.body.job_id });
    expect(foreign.data.job).toBeNull();
  });

  it("sendTestWebhook goes through the same ingest path and the job finishes", async () => {
    const r = await gql(app.url, admin, `mutation($t: ID!, $p: JSON!) { sendTestWebhook(triggerId: $t, payload: $p) { id status triggerId } }`, { t: trg.id, p: { hello: "world" } });
    expect(r.data.sendTestWebhook).toMatchObject({ triggerId: trg.id });
    // The worker may pick the job up before the mutation answers.
    expect(["QUEUED", "RUNNING", "DONE"]).toContain(r.data.sendTestWebhook.status);
    const status = await waitForJob(app.url, r.data.sendTestWebhook.id, { authorization: `Bearer ${admin}` });
    expect(status.status).toBe("done");
    const audit = await app.runtime.pool.query("select payload from audit_entries where job_id = $1", [r.data.sendTestWebhook.id]);
    expect(audit.rows[0].payload).toEqual({ hello: "world" });
  });

  it("HTTPS only unless ALLOW_INSECURE_HTTP: plain HTTP → 403 https_required; X-Forwarded-Proto from a trusted proxy counts", async () => {
    const plain = await postWebhook(strict.url, trg.id, "{}", { "x-trigger-secret": trg.secret });
    expect(plain.status).toBe(403);
    expect(plain.body.error.code).toBe("https_required");
    const jobPlain = await getJson(`${strict.url}/api/agent-run-jobs/job_x/status`, { authorization: `Bearer ${admin}` });
    expect(jobPlain.status).toBe(403);
    const proxied = await postWebhook(strict.url, trg.id, "{}", { "x-trigger-secret": trg.secret, "x-forwarded-proto": "https" });
    expect(proxied.status).toBe(202);
  });
});
