import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";
import { newId, randomBase62 } from "../infra/ids.js";
import { UNFINISHED_COUNT } from "./job-metrics.js";

/** Counts the statements the app sends that count jobs (the pool is real; only observed). */
function countJobCounts(app: TestApp): () => number {
  let n = 0;
  const pool = app.runtime.pool;
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string })?.text;
    if (text && /count\(\*\)[\s\S]*from jobs/i.test(text)) n++;
    return original(...args);
  };
  return () => n;
}

async function scrape(app: TestApp): Promise<string> {
  const res = await fetch(`${app.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

const gauge = (text: string, status: string) => Number(new RegExp(`^jobs\\{status="${status}"\\} (\\d+)$`, "m").exec(text)?.[1]);

async function insertJobs(app: TestApp, n: number, status: "queued" | "input_required" = "queued"): Promise<void> {
  const { accountId, adminToken } = await createAccount(app.url, app.operatorToken, `m-${randomBase62(6)}`);
  const r = await gql<{ createAgent: { id: string } }>(app.url, adminToken, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: "metrics" } });
  const agentId = r.data!.createAgent.id;
  // Rows as ingest writes them, but already marked dispatched so no workflow is started for them.
  await app.runtime.pool.query(
    `insert into jobs (id, account_id, agent_id, status, attempts, cost_micros, created_at, dispatched_at)
     select 'job_m' || g || '_' || $3, $1, $2, $5, 0, 0, now(), now() from generate_series(1, $4) g`,
    [accountId, agentId, randomBase62(6), n, status],
  );
}

describe("/metrics job figures are cheap", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { METRICS_JOBS_REFRESH_SECONDS: "3600" } });
  });
  afterAll(async () => app?.close());

  it("many scrapes, sequential and concurrent, count the jobs at most once per refresh interval", async () => {
    const counted = countJobCounts(app);
    const first = await scrape(app);
    expect(gauge(first, "queued")).toBe(0);
    await insertJobs(app, 3);
    for (let i = 0; i < 10; i++) await scrape(app);
    const texts = await Promise.all(Array.from({ length: 10 }, () => scrape(app)));
    expect(counted()).toBeLessThanOrEqual(1);
    // Cached: the inserted jobs are not seen within the interval.
    for (const t of texts) expect(gauge(t, "queued")).toBe(0);
  });

  it("transitions heard on job_status are counted without touching the table", async () => {
    const counted = countJobCounts(app);
    const before = await scrape(app);
    const value = (text: string, status: string) => Number(new RegExp(`^job_status_events_total\\{status="${status}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    for (const status of ["running", "done", "done", "failed"]) {
      await app.runtime.pool.query("select pg_notify('job_status', $1)", [JSON.stringify({ jobId: newId("job"), status })]);
    }
    await app.runtime.pool.query("select pg_notify('job_status', 'not json')");
    let after = before;
    for (let i = 0; i < 100 && value(after, "failed") === value(before, "failed"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await scrape(app);
    }
    expect(value(after, "done") - value(before, "done")).toBe(2);
    expect(value(after, "failed") - value(before, "failed")).toBe(1);
    expect(value(after, "running") - value(before, "running")).toBe(1);
    expect(counted()).toBe(0);
  });
});

describe("/metrics job gauges refresh", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { METRICS_JOBS_REFRESH_SECONDS: "1" } });
  });
  afterAll(async () => app?.close());

  it("show new active jobs once the interval has passed", async () => {
    expect(gauge(await scrape(app), "queued")).toBe(0);
    await insertJobs(app, 4);
    let text = await scrape(app);
    for (let i = 0; i < 100 && gauge(text, "queued") !== 4; i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await scrape(app);
    }
    expect(gauge(text, "queued")).toBe(4);
    expect(gauge(text, "running")).toBe(0);
  });

  it("count the runs waiting for an answer (ctx.ask) as jobs{status=\"input_required\"}", async () => {
    expect(gauge(await scrape(app), "input_required")).toBe(0);
    await insertJobs(app, 2, "input_required");
    let text = await scrape(app);
    for (let i = 0; i < 100 && gauge(text, "input_required") !== 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await scrape(app);
    }
    expect(gauge(text, "input_required")).toBe(2);
    expect(gauge(text, "queued")).toBe(4);
  });

  it("counts active jobs through the partial index, not the whole table", async () => {
    await app.runtime.pool.query("set enable_seqscan = off");
    const { rows } = await app.runtime.pool.query<{ "QUERY PLAN": string }>(`explain ${UNFINISHED_COUNT}`);
    const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(plan).toContain("jobs_active_idx");
    expect(plan).toContain("jobs_input_required_idx");
  });
});
