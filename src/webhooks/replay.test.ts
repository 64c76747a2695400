import { createHmac } from "node:crypto";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, gql, postWebhook, type CreatedTrigger } from "../../test/helpers/webhooks.js";

/**
 * Replays of a captured signed request (inside the ±300 s window, or at any time for the relaxed
 * no-timestamp mode) start no second job, whatever unsigned Idempotency-Key the replayer sets:
 * for a signed scheme what the signature covers names the delivery (Standard Webhooks: the
 * webhook-id; X-Service-Signature: the signature). No worker: jobs stay queued, so the job count
 * is exactly what ingest created.
 */
describe("replayed signed webhooks start one job", () => {
  let app: TestApp;
  let admin: string;
  let trg: CreatedTrigger;
  let seq = 0;

  beforeAll(async () => {
    app = await startTestApp();
    admin = (await createAccount(app.url, app.operatorToken, "replay")).adminToken;
    trg = await createTrigger(app.url, admin, await createAgent(app.url, admin, { name: "r", instructions: "x" }));
  });
  afterAll(async () => app?.close());

  const jobCount = async () => (await app.runtime.pool.query<{ n: number }>("select count(*)::int as n from jobs where trigger_id = $1", [trg.id])).rows[0]!.n;
  const body = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ v, n: seq++ }));
  const freshKeys = fc.uniqueArray(fc.uuid(), { minLength: 2, maxLength: 4 });
  const tsNow = () => Math.floor(Date.now() / 1000);

  /** Sends the captured request as captured and, at the same time, with each fresh key: every answer names one job. */
  async function replay(text: string, headers: Record<string, string>, keys: string[]): Promise<string> {
    const before = await jobCount();
    // Never used before (fast-check repeats generated values while shrinking).
    const variants = [headers, ...keys.map((key) => ({ ...headers, "idempotency-key": `${key}-${seq++}` }))];
    const answers = await Promise.all(variants.map((h) => postWebhook(app.url, trg.id, text, h)));
    for (const a of answers) expect(a.status).toBe(202);
    expect(new Set(answers.map((a) => a.body.job_id)).size).toBe(1);
    expect(await jobCount()).toBe(before + 1);
    return answers[0]!.body.job_id;
  }

  it("Standard Webhooks: the signed webhook-id wins over any Idempotency-Key", async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.stringMatching(/^msg_[A-Za-z0-9]{8,24}$/), freshKeys, async (text, id, keys) => {
        const t = tsNow();
        const headers = { "webhook-id": `${id}${seq}`, "webhook-timestamp": String(t), "webhook-signature": new Webhook(trg.secret).sign(`${id}${seq}`, new Date(t * 1000), text) };
        await replay(text, headers, keys);
      }),
      { numRuns: 15 },
    );
  });

  it("X-Service-Signature with a timestamp: the same signature, in any of its encodings, is one delivery", async () => {
    await fc.assert(
      fc.asyncProperty(body, freshKeys, fc.constantFrom("hex", "sha256=", "base64", "base64url"), async (text, keys, encoding) => {
        const t = String(tsNow());
        const mac = createHmac("sha256", trg.secret).update(`${t}.${text}`).digest();
        const headers = { "x-service-timestamp": t, "x-service-signature": `sha256=${mac.toString("hex")}` };
        const reencoded = { ...headers, "x-service-signature": encoding === "sha256=" ? `sha256=${mac.toString("hex")}` : mac.toString(encoding as BufferEncoding) };
        const jobId = await replay(text, headers, keys);
        // The same MAC spelled another way is the same captured request.
        const other = await postWebhook(app.url, trg.id, text, { ...reencoded, "idempotency-key": `other-${keys[0]}-${seq++}` });
        expect(other.status).toBe(202);
        expect(other.body.job_id).toBe(jobId);
      }),
      { numRuns: 15 },
    );
  });

  it("relaxed mode (no timestamp): a signature over the bare body is one delivery for 24 hours", async () => {
    const s = await gql(app.url, admin, `mutation { updateAccountSettings(input: { relaxSignatureTimestamp: true }) { relaxSignatureTimestamp } }`);
    expect(s.data?.updateAccountSettings.relaxSignatureTimestamp).toBe(true);
    try {
      await fc.assert(
        fc.asyncProperty(body, freshKeys, async (text, keys) => {
          await replay(text, { "x-service-signature": createHmac("sha256", trg.secret).update(text).digest("hex") }, keys);
        }),
        { numRuns: 10 },
      );
    } finally {
      await gql(app.url, admin, `mutation { updateAccountSettings(input: { relaxSignatureTimestamp: false }) { relaxSignatureTimestamp } }`);
    }
  });

  it("distinct deliveries still start distinct jobs; x-trigger-secret keeps using Idempotency-Key", async () => {
    const text = JSON.stringify({ same: "body" });
    const t = tsNow();
    const before = await jobCount();
    for (const id of ["msg_one", "msg_two"]) {
      const r = await postWebhook(app.url, trg.id, text, { "webhook-id": id, "webhook-timestamp": String(t), "webhook-signature": new Webhook(trg.secret).sign(id, new Date(t * 1000), text) });
      expect(r.status).toBe(202);
    }
    // Two timestamps: two signatures, two deliveries.
    for (const ts of [t, t - 1]) {
      const sig = createHmac("sha256", trg.secret).update(`${ts}.${text}`).digest("hex");
      expect((await postWebhook(app.url, trg.id, text, { "x-service-timestamp": String(ts), "x-service-signature": sig })).status).toBe(202);
    }
    const a = await postWebhook(app.url, trg.id, text, { "x-trigger-secret": trg.secret, "idempotency-key": "k-1" });
    const b = await postWebhook(app.url, trg.id, text, { "x-trigger-secret": trg.secret, "idempotency-key": "k-1" });
    const c = await postWebhook(app.url, trg.id, text, { "x-trigger-secret": trg.secret, "idempotency-key": "k-2" });
    expect(b.body.job_id).toBe(a.body.job_id);
    expect(c.body.job_id).not.toBe(a.body.job_id);
    expect(await jobCount()).toBe(before + 6);
  });
});
