import { afterAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount } from "../../test/helpers/graphql.js";
import { createAgent, createTrigger, postWebhook } from "../../test/helpers/webhooks.js";
import { spawnWorker, waitUntil, type WorkerProcess } from "../../test/helpers/worker-process.js";

/**
 * A worker stopped gracefully (SIGTERM: a rollout, a scale-down) while a run executes longer than
 * its WORKER_SHUTDOWN_GRACE_MS: the run is cut and retried on another worker, not failed.
 */
describe("a worker's graceful stop with a run in flight", () => {
  let app: TestApp | undefined;
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const w of workers) await w.kill("SIGKILL");
    await app?.close();
  });

  it("the run is retried on the next worker and ends done, its step not repeated", async () => {
    app = await startTestApp();
    const { adminToken } = await createAccount(app.url, app.operatorToken, "rollout");
    // A journaled step, then 4 s of work: longer than the 1 s grace the first worker gets.
    const script = `export default async function run(i, ctx) {
      const n = await ctx.step("count", async () => 1);
      const end = Date.now() + 4000; while (Date.now() < end) {}
      return { n };
    }`;
    const agent = await createAgent(app.url, adminToken, { name: "long", script });
    const t = await createTrigger(app.url, adminToken, agent);
    const status = async (id: string) => (await app!.runtime.pool.query<{ status: string }>("select status from jobs where id = $1", [id])).rows[0]?.status;

    const first = spawnWorker(app, { WORKER_SHUTDOWN_GRACE_MS: "1000" });
    workers.push(first);
    const accepted = await postWebhook(app.url, t.id, JSON.stringify({}), { "x-trigger-secret": t.secret });
    const id = accepted.body.job_id as string;
    await waitUntil(async () => (await status(id)) === "running", 60_000, "the run to start");
    await new Promise((r) => setTimeout(r, 300));
    await first.kill("SIGTERM");
    expect(first.child.exitCode).toBe(0);
    expect(await status(id)).toBe("running");

    workers.push(spawnWorker(app));
    await waitUntil(async () => ["done", "failed"].includes((await status(id)) ?? ""), 90_000, "the run to end");
    const { rows } = await app.runtime.pool.query<{ status: string; error: string | null; result: unknown; attempts: number }>(
      "select status, error, result, attempts from jobs where id = $1",
      [id],
    );
    expect(rows[0]).toMatchObject({ status: "done", error: null, result: { n: 1 } });
    expect(rows[0]!.attempts).toBeGreaterThanOrEqual(2);
    const steps = await app.runtime.pool.query<{ executions: number }>("select executions from job_steps where job_id = $1", [id]);
    expect(steps.rows).toEqual([{ executions: 1 }]);
  }, 180_000);
});
