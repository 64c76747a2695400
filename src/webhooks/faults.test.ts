import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, getJson, gql, postWebhook, waitForJob, type CreatedTrigger } from "../../test/helpers/webhooks.js";
import { MAX_JSON_DEPTH } from "../infra/json.js";

/**
 * Issue 8's webhook defects, driven as outside programs drive them: hostile payloads, a script
 * error no one planned for, a settings change followed at once by a request on another instance,
 * and a stranger probing an inactive trigger.
 */
describe("webhook faults (issue 8)", () => {
  let a: TestApp;
  let b: TestApp;
  let admin: string;
  let trg: CreatedTrigger;
  const secret = () => ({ "x-trigger-secret": trg.secret });

  beforeAll(async () => {
    a = await startTestApp({ worker: true });
    // A second API instance on the same database and task queue (the worker runs in `a`).
    b = await startTestApp({ databaseUrl: a.databaseUrl, taskQueue: a.config.temporal.taskQueue, operatorToken: a.operatorToken, secretEncryptionKey: a.config.secretEncryptionKey.toString("base64") });
    admin = (await createAccount(a.url, a.operatorToken, "faults")).adminToken;
    const agent = await createAgent(a.url, admin, {
      name: "echo",
      script: `export default async function run(input) {
        if (input && input.throwLong) throw new Error(input.throwLong + String.fromCharCode(0) + input.throwLong);
        if (input && input.deepResult) { let v = []; for (let i = 0; i < input.deepResult; i++) v = [v]; return v; }
        return { ok: true, kind: typeof input };
      }`,
    });
    trg = await createTrigger(a.url, admin, agent);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("defect 2: deeply nested JSON is refused at ingest with 400 invalid_json naming the limit; the process lives on", async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const body = "[".repeat(depth) + "]".repeat(depth);
      const r = await postWebhook(a.url, trg.id, body, secret());
      expect(r.status, `depth ${depth}`).toBe(400);
      expect(r.body.error).toMatchObject({ code: "invalid_json", max_depth: MAX_JSON_DEPTH });
      expect(r.body.error.message).toMatch(new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    }
    const objects = '{"a":'.repeat(50_000) + "1" + "}".repeat(50_000);
    expect((await postWebhook(a.url, trg.id, objects, secret())).status).toBe(400);
    // Brackets inside strings do not count; nesting at the limit runs to done.
    const atLimit = "[".repeat(MAX_JSON_DEPTH - 1) + JSON.stringify({ s: "[[[[{{{{".repeat(1000) }) + "]".repeat(MAX_JSON_DEPTH - 1);
    const ok = await postWebhook(a.url, trg.id, atLimit, secret());
    expect(ok.status).toBe(202);
    expect((await waitForJob(a.url, ok.body.job_id, secret())).status).toBe("done");
    // The same payload through sendTestWebhook (GraphQL JSON variable) is refused the same way.
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const query = JSON.stringify(`mutation($t: ID!, $p: JSON!) { sendTestWebhook(triggerId: $t, payload: $p) { id } }`);
      const res = await fetch(`${a.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
        body: `{"query":${query},"variables":{"t":"${trg.id}","p":${"[".repeat(depth)}${"]".repeat(depth)}}}`,
      });
      const viaGql = (await res.json()) as { errors?: { extensions?: { code?: string } }[]; error?: { code: string } };
      // Either the resolver refuses the payload or the GraphQL endpoint refuses the body; never a 500.
      expect(viaGql.errors?.[0]?.extensions?.code ?? viaGql.error?.code, `depth ${depth}`).toMatch(/^(BAD_USER_INPUT|invalid_json)$/);
      expect(res.status).toBeLessThan(500);
    }
    expect((await getJson(`${a.url}/readyz`)).status).toBe(200);
  });

  it("defect 2: a script whose result nests too deeply fails its own job with a clear error; the worker keeps running jobs", async () => {
    const r = await postWebhook(a.url, trg.id, JSON.stringify({ deepResult: 100_000 }), secret());
    expect(r.status).toBe(202);
    const failed = await waitForJob(a.url, r.body.job_id, secret(), 60_000);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/nest|stack|deep/i);
    const next = await postWebhook(a.url, trg.id, JSON.stringify({ n: 1 }), secret());
    expect((await waitForJob(a.url, next.body.job_id, secret())).status).toBe("done");
  });

  it("defect 3: a long, quote-heavy, multi-byte error message still moves the job to failed (stored capped)", async () => {
    const message = `"'\\\`é漢字🙂"`.repeat(3000);
    const r = await postWebhook(a.url, trg.id, JSON.stringify({ throwLong: message }), secret());
    expect(r.status).toBe(202);
    const status = await waitForJob(a.url, r.body.job_id, secret(), 60_000);
    expect(status.status).toBe("failed");
    expect(status.error).toContain(`"'\\\`é漢字🙂`);
    expect(status.error.length).toBeLessThanOrEqual(4000);
    expect(status.attempts).toBe(1);
  });

  it("defect 4: a settings change on instance A applies to the very next webhook on instance B", async () => {
    const other = await createAccount(a.url, a.operatorToken, "relax-flip");
    const agent = await createAgent(a.url, other.adminToken, { name: "r", script: "export default async function run() { return 1; }" });
    const t = await createTrigger(a.url, other.adminToken, agent);
    const body = JSON.stringify({ bare: true });
    const bare = { "x-service-signature": createHmac("sha256", t.secret).update(body).digest("hex") };
    const setRelax = async (on: boolean) => {
      const s = await gql(a.url, other.adminToken, `mutation($on: Boolean!) { updateAccountSettings(input: { relaxSignatureTimestamp: $on }) { relaxSignatureTimestamp } }`, { on });
      expect(s.data?.updateAccountSettings.relaxSignatureTimestamp).toBe(on);
    };
    // B has seen the trigger (and so cached it) before the change.
    expect((await postWebhook(b.url, t.id, body, bare)).status).toBe(401);
    await setRelax(true);
    expect((await postWebhook(b.url, t.id, body, bare)).status).toBe(202);
    await setRelax(false);
    expect((await postWebhook(b.url, t.id, body, bare)).status).toBe(401);
  });

  it("Standard Webhooks: one webhook-id sent concurrently to two instances makes one job; every answer names it", async () => {
    // 12 copies of one signed message, half to each instance, all at once: they race in different
    // group-commit batches on different instances for the same idempotency record.
    const msgId = `msg_dup_${Date.now()}`;
    const ts = String(Math.floor(Date.now() / 1000));
    const body = JSON.stringify({ dup: true });
    const wh = new Webhook(trg.secret);
    const headers = { "webhook-id": msgId, "webhook-timestamp": ts, "webhook-signature": wh.sign(msgId, new Date(Number(ts) * 1000), body) };
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => postWebhook(i % 2 ? b.url : a.url, trg.id, body, headers)));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(202));
    const ids = new Set(answers.map((r) => r.body.job_id));
    expect(ids.size).toBe(1);
    const { rows } = await a.runtime.pool.query("select count(*)::int as n from idempotency_records where trigger_id = $1 and key = $2", [trg.id, msgId]);
    expect(rows[0].n).toBe(1);
    const jobs = await a.runtime.pool.query("select count(*)::int as n from audit_entries a join jobs j on j.id = a.job_id where j.trigger_id = $1 and a.payload @> $2::jsonb", [trg.id, body]);
    expect(jobs.rows[0].n).toBe(1);
    // A later retry of the same message (the sender did not see the 202) still answers the first job.
    const again = await postWebhook(b.url, trg.id, body, headers);
    expect(again.status).toBe(202);
    expect(again.body.job_id).toBe([...ids][0]);
  });

  it("defect 6: an inactive trigger answers 401 to a caller without its secret, 403 trigger_inactive only to its owner's senders", async () => {
    const agent = await createAgent(a.url, admin, { name: "off", script: "export default async function run() { return 1; }" });
    const t = await createTrigger(a.url, admin, agent);
    const off = await gql(a.url, admin, `mutation($id: ID!) { setTriggerActive(id: $id, active: false) { active } }`, { id: t.id });
    expect(off.data?.setTriggerActive.active).toBe(false);
    for (const headers of [{}, { "x-trigger-secret": "whsec_wrong" }] as Record<string, string>[]) {
      const r = await postWebhook(a.url, t.id, "{}", headers);
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("invalid_credentials");
    }
    const owner = await postWebhook(a.url, t.id, "{}", { "x-trigger-secret": t.secret });
    expect(owner.status).toBe(403);
    expect(owner.body.error.code).toBe("trigger_inactive");
  });
});
