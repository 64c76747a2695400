import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, postWebhook } from "../../test/helpers/webhooks.js";
import { beginRunRow } from "./store.js";

/**
 * beginRunRow, the per-account run limiter's statement (one round trip: the account's advisory
 * lock and the UPDATE as two statements of one implicit transaction), raced directly: no worker
 * runs, so nothing but these calls moves the jobs.
 */
describe("beginRunRow under concurrency", () => {
  let app: TestApp;
  let trigger: { id: string; secret: string };
  beforeAll(async () => {
    app = await startTestApp(); // no worker: the jobs stay queued until these calls begin them
    const { adminToken } = await createAccount(app.url, app.operatorToken, "limiter");
    const agent = await createAgent(app.url, adminToken, { name: "l", script: "export default async function run() { return {}; }" });
    trigger = await createTrigger(app.url, adminToken, agent);
  });
  afterAll(async () => app?.close());

  const queuedJobs = async (n: number) => {
    const res = await Promise.all(Array.from({ length: n }, (_, i) => postWebhook(app.url, trigger.id, JSON.stringify({ i }), { "x-trigger-secret": trigger.secret })));
    return res.map((r) => r.body.job_id as string);
  };
  const running = async () => (await app.runtime.pool.query<{ n: number }>("select count(*)::int as n from jobs where status = 'running'")).rows[0]!.n;

  it("30 concurrent starts of one account with a limit of 3: exactly 3 begin, the rest stay queued; a repeat is idempotent", async () => {
    const ids = await queuedJobs(30);
    const limits = { perAccount: 3, perAgent: 100, slots: 3 };
    const results = await Promise.all(ids.map((id) => beginRunRow(app.runtime.pool, id, limits)));
    expect(results.filter((r) => r?.slotFree).length).toBe(3);
    expect(await running()).toBe(3);
    // A retried beginRun of a job that began (its workflow replaying it) still has its slot.
    const began = ids.filter((_, i) => results[i]!.slotFree);
    for (const id of began) expect((await beginRunRow(app.runtime.pool, id, limits))?.slotFree).toBe(true);
    expect(await running()).toBe(3);
    await app.runtime.pool.query("update jobs set status = 'done' where status = 'running'");
    // Two slots freed of 3 taken … all three again, never more.
    const again = await Promise.all(ids.map((id) => beginRunRow(app.runtime.pool, id, limits)));
    expect(again.filter((r, i) => r?.slotFree && !began.includes(ids[i]!)).length).toBe(3);
    expect(await running()).toBe(3);
    await app.runtime.pool.query("update jobs set status = 'done' where status in ('running', 'queued')");
  });

  it("any job id (quotes, backslashes, semicolons, SQL): no job is touched and the answer is 'gone'", async () => {
    const [id] = await queuedJobs(1);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.constantFrom(`'; update jobs set status = 'running'; --`, `\\'`, `x' or '1'='1`, `${id}' or 'a'='a`)), async (hostile) => {
        fc.pre(hostile !== id && !hostile.includes("\u0000"));
        expect(await beginRunRow(app.runtime.pool, hostile, { perAccount: 100, perAgent: 100, slots: 3 })).toBeUndefined();
      }),
      { numRuns: 200 },
    );
    expect(await running()).toBe(0);
    expect((await app.runtime.pool.query("select status from jobs where id = $1", [id])).rows[0].status).toBe("queued");
  });
});
