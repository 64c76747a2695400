import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { must, newAgent, newTrigger, postWebhook, waitForJob } from "../helpers/ops.js";
import { waitUntil } from "../helpers/worker-process.js";
import { runRetention } from "../../src/jobs/retention.js";
import { retentionScheduleId } from "../../src/jobs/schedule.js";
import { HEARTBEAT_TIMEOUT_MS } from "../../workflows/contract.js";

const DAY = 86_400_000;
const BATCH_TIMEOUT_S = 8;

/**
 * Retention in batches (jobs/retention.ts): many expired runs are purged a batch per
 * transaction, so a request on one of them (a replay) goes through while the purge is still
 * running; a run stopped between batches and run again purges exactly what one run would have;
 * the operator starts a run and follows it through GraphQL.
 */
describe("retention purges in bounded batches", () => {
  let app: TestApp;
  let admin: string;
  let original: string;

  /** `n` copies of the original run (job and audit entry, new ids) received `ageDays` ago, one more day apart per 1,000. */
  const copyRuns = async (n: number, ageDays: number, tag: string): Promise<string[]> => {
    const { rows } = await app.runtime.pool.query<{ id: string }>(
      `with g as (select i, '${tag}_' || i as id, now() - make_interval(days => $3::int, secs => i) as at from generate_series(1, $2::int) i),
            j as (insert into jobs select (jsonb_populate_record(null::jobs, to_jsonb(o) || jsonb_build_object('id', g.id, 'thread_id', null, 'created_at', g.at))).*
                    from jobs o, g where o.id = $1 returning id),
            a as (insert into audit_entries select (jsonb_populate_record(null::audit_entries, to_jsonb(e) || jsonb_build_object('id', 'aud_' || g.id, 'job_id', g.id, 'created_at', g.at))).*
                    from audit_entries e, g where e.job_id = $1)
       select id from j`,
      [original, n, ageDays],
    );
    return rows.map((r) => r.id);
  };
  const purged = async (tag: string) =>
    (await app.runtime.pool.query<{ n: number }>(`select count(*)::int as n from audit_entries where job_id like $1 and payload_purged_at is not null and payload is null`, [`${tag}\\_%`])).rows[0]!.n;
  const runRow = async (id: string) => (await app.runtime.pool.query(`select status, batches, payloads from retention_runs where id = $1`, [id])).rows[0];

  beforeAll(async () => {
    // Longer than the heartbeat timeout (a slow batch must not be retried), short enough to wait out 5 attempts.
    app = await startTestApp({ worker: true, env: { RETENTION_BATCH_TIMEOUT_SECONDS: String(BATCH_TIMEOUT_S) } });
    // The worker's hourly Schedule fires at the top of the hour and would purge these rows too
    // (after the stuck test's lock is released, before its count): only the test's own runs purge.
    await app.runtime.temporal.client.schedule.getHandle(retentionScheduleId(app.config.temporal.taskQueue)).pause("retention-batches.test.ts counts its own runs");
    const created = await createAccount(app.url, app.operatorToken, "bulk", "10");
    admin = created.adminToken;
    const trigger = await newTrigger(app.url, admin, await newAgent(app.url, admin, { name: "echo", script: "export default async function run(input) { return input; }" }));
    original = (await postWebhook(app.url, trigger, { customer: "c1" })).body.job_id;
    expect((await waitForJob(app.url, admin, original)).status).toBe("DONE");
  });
  afterAll(async () => {
    await app?.close();
  });

  it("a replay of one of the expiring runs completes while the purge is still going", async () => {
    const ids = await copyRuns(6000, 40, "jbig");
    const newest = ids[0]!; // the smallest offset: purged last (batches go oldest first)
    let firstBatch!: () => void;
    const started = new Promise<void>((r) => (firstBatch = r));
    let finished = false;
    const run = runRetention(app.runtime.pool, "test-big", new Date(), { batchSize: 50, onBatch: () => firstBatch() }).then((r) => ((finished = true), r));
    await started;
    const replay = await must(app.url, admin, `mutation($id: ID!) { replayJob(id: $id) { id } }`, { id: newest });
    // It went through between two batches: the purge had not reached its run yet, and is still going.
    expect(finished).toBe(false);
    expect((await runRow("test-big")).status).toBe("running");
    // Cancelling the replay answers too (cancelled, or already done: the worker may have run it).
    const cancelled = await gql(app.url, admin, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, { id: replay.replayJob.id });
    expect(cancelled.data?.cancelJob?.status ?? cancelled.errors?.[0]?.extensions?.code).toMatch(/FAILED|BAD_USER_INPUT/);
    expect(finished).toBe(false);
    const totals = await run;
    expect(await purged("jbig")).toBe(6000);
    // The replay's copy is dated like its original: this run took it if its job had ended in time.
    expect(totals.payloads).toBeGreaterThanOrEqual(6000);
    expect(await runRow("test-big")).toMatchObject({ status: "done", payloads: totals.payloads });
    await waitForJob(app.url, admin, replay.replayJob.id);
    await runRetention(app.runtime.pool, "test-big-sweep", new Date(), { batchSize: 1000 }); // so the next tests count only their own
  });

  it("a run stopped between batches, run again, purges exactly what was expired, and nothing newer", async () => {
    await copyRuns(2000, 60, "jcrash");
    await copyRuns(300, 1, "jkeep");
    const stop = new AbortController();
    let batches = 0;
    const asOf = new Date();
    const first = runRetention(app.runtime.pool, "test-crash", asOf, { batchSize: 100, signal: stop.signal, onBatch: () => ++batches === 7 && stop.abort() });
    await expect(first).rejects.toThrow();
    expect(await runRow("test-crash")).toMatchObject({ status: "running", batches: 7, payloads: 700 });
    expect(await purged("jcrash")).toBe(700);
    // The rerun keeps the first start's asOf (a later one here must not widen it).
    const again = await runRetention(app.runtime.pool, "test-crash", new Date(asOf.getTime() + 100 * DAY), { batchSize: 100 });
    expect(again.payloads).toBe(2000);
    expect(await purged("jcrash")).toBe(2000);
    expect(await purged("jkeep")).toBe(0);
    expect(await runRow("test-crash")).toMatchObject({ status: "done", payloads: 2000 });
  });

  it("the operator starts a run and sees it in retentionRuns; an account admin cannot", async () => {
    await copyRuns(250, 45, "jop");
    const started = await must(app.url, app.operatorToken, `mutation { runRetention { id status asOf } }`);
    expect(started.runRetention.status).toBe("running");
    const id = started.runRetention.id;
    const last = async () => (await must(app.url, app.operatorToken, `{ retentionRuns(first: 1) { id status batches payloads finishedAt } }`)).retentionRuns[0];
    await waitUntil(async () => (await last()).status === "done", 60_000, "the operator's retention run");
    expect(await last()).toMatchObject({ id, status: "done", payloads: 250 });
    expect((await last()).batches).toBeGreaterThanOrEqual(1);
    expect(await purged("jop")).toBe(250);
    const metrics = await app.runtime.metrics.registry.getSingleMetricAsString("retention_purged_total");
    expect(metrics).toMatch(/retention_purged_total\{kind="payloads"\} [1-9]/);
    for (const q of [`{ retentionRuns { id } }`, `mutation { runRetention { id } }`]) {
      expect((await gql(app.url, admin, q)).errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    }
  });
  /** Holds `audit_entries` so no batch can take a row, until the returned release is called. */
  const lockAuditEntries = async () => {
    const client = await app.runtime.pool.connect();
    await client.query("begin");
    await client.query("lock table audit_entries in exclusive mode");
    return async () => {
      await client.query("rollback");
      client.release();
    };
  };
  const operatorRun = async () => (await must(app.url, app.operatorToken, `mutation { runRetention { id } }`)).runRetention.id as string;
  const lastRun = async (id: string) => (await must(app.url, app.operatorToken, `{ retentionRuns(first: 5) { id status payloads error } }`)).retentionRuns.find((r: { id: string }) => r.id === id);

  it("a batch slower than the heartbeat timeout is one attempt, not a retry beside itself", async () => {
    await copyRuns(40, 50, "jslow");
    const release = await lockAuditEntries();
    let id: string;
    try {
      id = await operatorRun();
      // The first batch waits for the lock past the heartbeat timeout, and ends well before its own.
      await new Promise((r) => setTimeout(r, HEARTBEAT_TIMEOUT_MS + 1500));
    } finally {
      await release();
    }
    await waitUntil(async () => (await lastRun(id))?.status !== "running", 60_000, "the retention run");
    expect(await lastRun(id)).toMatchObject({ status: "done", payloads: 40, error: null });
    const events = (await app.runtime.temporal.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    expect(events.filter((e) => e.activityTaskTimedOutEventAttributes)).toEqual([]);
    expect(events.flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : []))).toEqual([1]);
  });

  it("a run whose every attempt is stuck ends failed, saying why, not running forever", { timeout: 180_000 }, async () => {
    await copyRuns(40, 55, "jstuck");
    const release = await lockAuditEntries();
    let id: string;
    try {
      id = await operatorRun();
      // Five attempts, each cancelled by PostgreSQL after BATCH_TIMEOUT_S, with the retry backoff between.
      await waitUntil(async () => (await app.runtime.temporal.client.workflow.getHandle(id).describe()).status.name !== "RUNNING", 150_000, "the retention workflow to give up");
    } finally {
      await release();
    }
    expect((await app.runtime.temporal.client.workflow.getHandle(id).describe()).status.name).toBe("FAILED");
    const run = await lastRun(id);
    expect(run).toMatchObject({ status: "failed", payloads: 0 });
    expect(run.error).toMatch(/longer than 8000 ms.*RETENTION_BATCH_TIMEOUT_SECONDS/);
    expect(await purged("jstuck")).toBe(0);
    // Run again once the lock is gone, it purges them.
    const again = await operatorRun();
    await waitUntil(async () => (await lastRun(again))?.status === "done", 60_000, "the rerun");
    expect(await purged("jstuck")).toBe(40);
  });
});
