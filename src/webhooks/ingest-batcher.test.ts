import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, postWebhook } from "../../test/helpers/webhooks.js";
import { IngestBatcher, type IngestItem } from "./ingest-batcher.js";

/**
 * Group commit under a fault: the batch commits, then the lookup of earlier jobs for reused
 * idempotency keys fails. An accepted webhook must still map to exactly one job.
 */
describe("IngestBatcher when the idempotency lookup fails after the commit", () => {
  let app: TestApp;
  let trigger: { id: string; accountId: string; agentId: string };

  beforeAll(async () => {
    app = await startTestApp();
    const { adminToken, accountId } = await createAccount(app.url, app.operatorToken, "batch");
    const agentId = await createAgent(app.url, adminToken, { name: "b", script: "export default async function run() { return 1; }" });
    const t = await createTrigger(app.url, adminToken, agentId);
    trigger = { id: t.id, accountId, agentId };
    // The key "used" already has a job (a real webhook took it).
    expect((await postWebhook(app.url, t.id, "{}", { "x-trigger-secret": t.secret, "idempotency-key": "used" })).status).toBe(202);
  });
  afterAll(async () => {
    await app?.close();
  });

  it("answers the committed jobs with their ids, fails only the key reuse (503), and writes no duplicate", async () => {
    // The real pool, except that the idempotency lookup fails once (the connection dropped at that moment).
    let failLookup = true;
    const pool = {
      query: (text: string, params?: unknown[]) => {
        if (failLookup && /^\s*select trigger_id, '' as agent_id, '' as source, key, job_id from idempotency_records/.test(text)) {
          failLookup = false;
          return Promise.reject(Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" }));
        }
        return app.runtime.pool.query(text, params);
      },
    } as unknown as pg.Pool;
    const committed: string[] = [];
    const batcher = new IngestBatcher(pool, (ids) => committed.push(...ids), { maxInFlight: 1 });
    const item = (n: number, key: string | null): IngestItem => ({ ...trigger, triggerId: trigger.id, source: "webhook", idempotencyKey: key, payloadText: JSON.stringify({ n }) });

    const first = batcher.submit(item(0, null)); // flushes alone; the next three wait and share one batch
    const batch = [batcher.submit(item(1, null)), batcher.submit(item(2, null)), batcher.submit(item(3, "used"))];
    const results = await Promise.allSettled([first, ...batch]);

    const accepted = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.jobId] : []));
    expect(results.slice(0, 3).every((r) => r.status === "fulfilled" && r.value.created)).toBe(true);
    const reused = results[3]!;
    expect(reused.status).toBe("rejected");
    expect((reused as PromiseRejectedResult).reason).toMatchObject({ code: "service_unavailable", status: 503 });

    const { rows } = await app.runtime.pool.query<{ id: string; n: number }>(
      "select j.id, (a.payload->>'n')::int as n from jobs j join audit_entries a on a.job_id = j.id where j.trigger_id = $1 and a.payload ? 'n' order by n",
      [trigger.id],
    );
    // One job per accepted item, the ids the callers got, nothing inserted twice.
    expect(rows.map((r) => r.n)).toEqual([0, 1, 2]);
    expect(rows.map((r) => r.id).sort()).toEqual([...accepted].sort());
    expect([...committed].sort()).toEqual([...accepted].sort());

    // The client retries with the same key and now gets the first job's id.
    const again = await batcher.submit(item(4, "used"));
    expect(again.created).toBe(false);
    const { rows: first_ } = await app.runtime.pool.query("select job_id from idempotency_records where trigger_id = $1 and key = 'used'", [trigger.id]);
    expect(again.jobId).toBe(first_[0].job_id);
  });
});
