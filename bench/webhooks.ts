import "reflect-metadata";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import autocannon from "autocannon";
import { Client, Connection } from "@temporalio/client";
import { NativeConnection, Worker } from "@temporalio/worker";
import { startEmbeddedPostgres } from "../src/dev/embedded-postgres.js";
import { startTemporalDevServer } from "../src/dev/temporal-dev-server.js";
import { freePort } from "../src/dev/free-port.js";
import { migrateDatabase } from "../src/db/orm.js";
import { createAccount } from "../src/accounts/service.js";
import { randomBase62 } from "../src/infra/ids.js";

/**
 * `npm run bench:webhooks`:
 * 1. ingest: autocannon POSTs signed-by-secret webhooks at rising concurrency against the API
 *    (`src/entry/serve.ts`, its own process); every 202 is committed (job + audit entry) and the
 *    dispatcher starts a Temporal workflow per job. The worker is not running in this phase, so
 *    the numbers are the ingest path alone.
 * 2. webhook → done latency for a trivial script (worker process running), measured from the POST
 *    to the `done` NOTIFY, one webhook at a time; beside it the floor: a bare workflow with one
 *    no-op activity, started through the client, on the same Temporal server.
 * Env: BENCH_DURATION s per ingest step (default 10), BENCH_SAMPLES for latency (default 50).
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 50);
const CONCURRENCY = [10, 50, 100, 200];
const children: ChildProcess[] = [];
const say = (m: string) => process.stderr.write(`[bench] ${m}\n`);

function start(name: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  child.stderr!.on("data", (d) => process.env.BENCH_VERBOSE && process.stderr.write(`[${name}] ${d}`));
  child.stdout!.on("data", (d) => process.env.BENCH_VERBOSE && process.stderr.write(`[${name}] ${d}`));
  children.push(child);
  return child;
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const dir = mkdtempSync(join(tmpdir(), "agw-bench-wh-"));
let pgServer: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
let temporal: Awaited<ReturnType<typeof startTemporalDevServer>> | undefined;
try {
  say("starting embedded PostgreSQL and a Temporal dev server");
  [pgServer, temporal] = await Promise.all([
    startEmbeddedPostgres(join(dir, "pg")),
    startTemporalDevServer({ dataDir: join(dir, "temporal"), cliPath: process.env.TEMPORAL_CLI_PATH || undefined, namespace: "default", ui: false }),
  ]);
  await pgServer.ensureDatabase("bench");
  const databaseUrl = pgServer.urlFor("bench");
  await migrateDatabase(databaseUrl);

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const { adminToken } = await createAccount(pool, "bench", 1_000_000n * 1_000_000n);
  const port = await freePort();
  const taskQueue = `bench-${randomBase62(6)}`;
  const env = {
    NODE_ENV: "development",
    DATA_DIR: join(dir, "data"),
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: "20",
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    OPERATOR_TOKEN: `opr_${randomBase62(32)}`,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
  };
  start("api", ["--import", "@swc-node/register/esm-register", "src/entry/serve.ts"], env);
  const api = `http://127.0.0.1:${port}`;
  await waitFor(`${api}/healthz`);

  const gql = async (query: string, variables: Record<string, unknown>) => {
    const r = await fetch(`${api}/graphql`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ query, variables }) });
    const body = (await r.json()) as { data: any; errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
  const agent = await gql(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, {
    i: { name: "bench", script: "export default async function run(input) { return { ok: true, n: input.n }; }" },
  });
  const created = await gql(`mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: agent.createAgent.id });
  const triggerId: string = created.createTrigger.trigger.id;
  const secret: string = created.createTrigger.secret;
  const url = `${api}/api/triggers/${triggerId}/webhook`;
  // Beside the trivial script: one with two journaled steps (two job_steps rows written per run).
  const stepsAgent = await gql(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, {
    i: { name: "bench-steps", script: "export default async function run(input, ctx) { const a = await ctx.step('a', async () => input.n); const b = await ctx.step('b', async () => a + 1); return { ok: true, n: b }; }" },
  });
  const stepsTrigger = await gql(`mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: stepsAgent.createAgent.id });
  const headers = { "content-type": "application/json", "x-trigger-secret": secret };
  const body = JSON.stringify({ event: "order.created", order: { id: 12345, total: "19.99", items: [{ sku: "A1", qty: 2 }] } });

  // 1. Ingest.
  const ingestRows: string[] = [];
  await autocannon({ url, method: "POST", headers, body, connections: 10, duration: 2 }); // warm-up
  for (const connections of CONCURRENCY) {
    const before = await pool.query<{ n: number }>("select count(*)::int as n from jobs");
    const r = await autocannon({ url, method: "POST", headers, body, connections, duration: DURATION });
    const after = await pool.query<{ n: number }>("select count(*)::int as n from jobs");
    const committed = after.rows[0]!.n - before.rows[0]!.n;
    say(`ingest c=${connections}: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}, jobs committed ${committed}`);
    ingestRows.push(`| ${connections} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} | ${committed} |`);
  }
  // The ingest backlog must not disturb phase 2: stop this API, park the backlog, and measure with
  // a fresh API + worker on a new task queue (the backlog's workflows stay on the old one, unpolled).
  const started = await pool.query<{ n: number; total: number }>("select count(dispatched_at)::int as n, count(*)::int as total from jobs");
  say(`workflows started for ${started.rows[0]!.n} of ${started.rows[0]!.total} ingested jobs by the end of the ingest phase`);
  const apiProc = children.pop()!;
  apiProc.kill("SIGTERM");
  await new Promise((r) => apiProc.once("exit", r));
  await pool.query("update jobs set status = 'failed', error = 'bench backlog', dispatched_at = coalesce(dispatched_at, now()) where status = 'queued'");
  const port2 = await freePort();
  const env2 = { ...env, PORT: String(port2), TEMPORAL_TASK_QUEUE: `${taskQueue}-latency` };
  start("api", ["--import", "@swc-node/register/esm-register", "src/entry/serve.ts"], env2);
  const api2 = `http://127.0.0.1:${port2}`;
  await waitFor(`${api2}/healthz`);
  const url2 = `${api2}/api/triggers/${triggerId}/webhook`;
  const temporalConn = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection: temporalConn });

  // 2. webhook → done vs the bare-workflow floor.
  start("worker", ["--import", "@swc-node/register/esm-register", "src/entry/worker.ts"], env2);
  const listener = new pg.Client({ connectionString: databaseUrl });
  await listener.connect();
  const waiters = new Map<string, () => void>();
  listener.on("notification", (m) => {
    const e = JSON.parse(m.payload ?? "{}") as { jobId: string; status: string };
    if (e.status === "done" || e.status === "failed") waiters.get(e.jobId)?.();
  });
  await listener.query("LISTEN job_status");
  const stepsUrl2 = `${api2}/api/triggers/${stepsTrigger.createTrigger.trigger.id}/webhook`;
  const stepsHeaders = { "content-type": "application/json", "x-trigger-secret": stepsTrigger.createTrigger.secret as string };
  const fire = async (n: number, target: { url: string; headers: Record<string, string> } = { url: url2, headers }) => {
    const t0 = performance.now();
    const res = await fetch(target.url, { method: "POST", headers: target.headers, body: JSON.stringify({ n }) });
    const { job_id } = (await res.json()) as { job_id: string };
    await new Promise<void>((resolve) => {
      waiters.set(job_id, resolve);
    });
    // Resolve only if the status is done; a failed job would make the number meaningless.
    const { rows } = await pool.query<{ status: string }>("select status from jobs where id = $1", [job_id]);
    if (rows[0]!.status !== "done") throw new Error(`bench job ${job_id} ended ${rows[0]!.status}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 5; i++) await fire(-1); // warm-up: first worker poll, workflow bundle, sandbox thread
  const webhookLat: number[] = [];
  for (let i = 0; i < SAMPLES; i++) webhookLat.push(await fire(i));
  const stepsLat: number[] = [];
  for (let i = 0; i < SAMPLES; i++) stepsLat.push(await fire(i, { url: stepsUrl2, headers: stepsHeaders }));

  const floorQueue = `${taskQueue}-floor`;
  const nativeConn = await NativeConnection.connect({ address: temporal.address });
  const floorWorker = await Worker.create({
    connection: nativeConn,
    taskQueue: floorQueue,
    workflowsPath: fileURLToPath(new URL("./webhooks-workflows.ts", import.meta.url)),
    activities: { async noop() {} },
  });
  const floorRun = floorWorker.run();
  const floorOnce = async () => {
    const t0 = performance.now();
    await client.workflow.execute("benchNoop", { taskQueue: floorQueue, workflowId: `floor-${randomBase62(8)}` });
    return performance.now() - t0;
  };
  for (let i = 0; i < 5; i++) await floorOnce();
  const floorLat: number[] = [];
  for (let i = 0; i < SAMPLES; i++) floorLat.push(await floorOnce());
  floorWorker.shutdown();
  await floorRun;
  await nativeConn.close();
  await temporalConn.close();
  await listener.end();
  await pool.end();

  const f = (x: number) => x.toFixed(1);
  const ratio = pct(webhookLat, 50) / pct(floorLat, 50);
  say(`two journaled steps: webhook → done p50 ${f(pct(stepsLat, 50))} ms p99 ${f(pct(stepsLat, 99))} ms`);
  say(`webhook → done p50 ${f(pct(webhookLat, 50))} ms p99 ${f(pct(webhookLat, 99))} ms; bare workflow p50 ${f(pct(floorLat, 50))} ms p99 ${f(pct(floorLat, 99))} ms; ratio ${ratio.toFixed(2)}×`);

  const section = [
    "## Webhooks",
    "",
    `Command: \`npm run bench:webhooks\` (BENCH_DURATION=${DURATION}, BENCH_SAMPLES=${SAMPLES}). Run on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} CPUs (${cpus()[0]?.model ?? "unknown"}), Node ${process.version}.`,
    "",
    "Everything on one machine: embedded PostgreSQL, the Temporal dev server (SQLite, WAL, synchronous=OFF), the API (`src/entry/serve.ts`),",
    "the worker (`src/entry/worker.ts`, phase 2 only) and the load generator (autocannon).",
    "",
    "### Ingest: `POST /api/triggers/<id>/webhook` with `x-trigger-secret`, 150-byte JSON body",
    "",
    `Each 202 is sent only after its job, audit entry and (none here) idempotency record are committed — group commit batches concurrent requests into one statement. The API's dispatcher starts one Temporal workflow per job meanwhile; the worker is stopped in this phase. ${DURATION} s per row after a 2 s warm-up. "committed" counts job rows created during the row (it should equal the number of 202s).`,
    "",
    `Workflows started by the dispatcher by the end of the ingest phase: ${started.rows[0]!.n} of ${started.rows[0]!.total} jobs (the rest is the dispatch backlog; starts are bounded by the Temporal dev server on the same 2 cores).`,
    "",
    "| connections | webhooks/s | p50 ms | p99 ms | non-2xx + errors | jobs committed |",
    "|---|---|---|---|---|---|",
    ...ingestRows,
    "",
    "### Webhook → done vs the bare-workflow floor",
    "",
    `One at a time, ${SAMPLES} samples after 5 warm-ups. Webhook → done: from sending the POST to the \`done\` NOTIFY (ingest commit, dispatch, \`agentRun\`: markRunning, executeAgentRun — a trivial QuickJS script in a fresh WASM instance —, markDone). Floor: \`client.workflow.execute\` of a workflow with one no-op activity, worker in the bench process, same Temporal server.`,
    "",
    "| path | p50 ms | p99 ms |",
    "|---|---|---|",
    `| webhook → done (trivial script) | ${f(pct(webhookLat, 50))} | ${f(pct(webhookLat, 99))} |`,
    `| webhook → done (script with two journaled ctx.step calls) | ${f(pct(stepsLat, 50))} | ${f(pct(stepsLat, 99))} |`,
    `| bare workflow, one no-op activity | ${f(pct(floorLat, 50))} | ${f(pct(floorLat, 99))} |`,
    `| ratio (p50) | ${ratio.toFixed(2)}× | |`,
    "",
  ].join("\n");
  const file = "BENCHMARKS.md";
  const current = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n\n";
  const next = /^## Webhooks\n/m.test(current) ? current.replace(/^## Webhooks\n[\s\S]*?(?=^## |(?![\s\S]))/m, `${section}\n`) : `${current.trimEnd()}\n\n${section}`;
  writeFileSync(file, next);
  process.stdout.write(`${section}\n`);
} finally {
  for (const c of children) c.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 1000));
  await temporal?.stop().catch(() => {});
  await pgServer?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
