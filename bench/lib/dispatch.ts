import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { Client, Connection } from "@temporalio/client";
import { say, sleep, startProcess } from "./harness.js";
import { freePort } from "../../src/dev/free-port.js";
import { OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY } from "./gateway.js";

/** Dispatch measurements shared by the dev-server and the production-topology rows of bench:webhooks. */

export const LANES = 32; // the dispatcher's default concurrency (src/jobs/dispatcher.ts)

/**
 * `n` committed, undispatched copies of job `sample` (ids `job_bench_<tag>_<i>`), created 10 s ago
 * so the dispatcher's sweep takes them at once. Schema-agnostic: the row is copied as JSON (keys
 * the table lacks, such as a dispatch lease on older schemas, are ignored).
 */
export async function copyJobs(pool: pg.Pool, sample: string, tag: string, n: number, options: { dispatched?: boolean } = {}): Promise<void> {
  // `dispatched`: stamped as dispatched from the start, so no API's sweep ever takes them (for the bare loop to start).
  const { rowCount } = await pool.query(
    `insert into jobs select (jsonb_populate_record(null::jobs, to_jsonb(j) || jsonb_build_object(
       'id', 'job_bench_' || $2::text || '_' || g, 'status', 'queued', 'dispatched_at', case when $4::boolean then now() end, 'dispatch_lease_until', null,
       'created_at', now() - interval '10 seconds'))).*
     from jobs j, generate_series(1, $3::int) g where j.id = $1`,
    [sample, tag, n, options.dispatched ?? false],
  );
  if (rowCount !== n) throw new Error(`copied ${rowCount} jobs instead of ${n} (sample ${sample})`);
}

/**
 * Sends one webhook to an API instance. On main the dispatcher of an instance is created with its
 * first webhook (src/webhooks/services.ts is reached from the ingest path only), so a freshly
 * started instance does not sweep a committed backlog until then; the bench sends one to each
 * instance before measuring. `x-forwarded-proto` lets it through a production instance that trusts
 * loopback proxies.
 */
export async function kick(apiUrl: string, triggerId: string, secret: string): Promise<void> {
  const r = await fetch(`${apiUrl}/api/triggers/${triggerId}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-trigger-secret": secret, "x-forwarded-proto": "https" },
    body: JSON.stringify({ kick: true }),
  });
  await r.arrayBuffer();
  if (r.status !== 202) throw new Error(`kick webhook to ${apiUrl} answered ${r.status}`);
}

/**
 * Waits until every copy tagged `tag` is dispatched; the rate comes from their dispatched_at stamps.
 * (`_` in a LIKE pattern matches any character: no tag may be another tag followed by more letters.)
 */
export async function drain(pool: pg.Pool, tag: string, timeoutMs = 300_000): Promise<{ n: number; seconds: number; rate: number }> {
  const like = `job_bench_${tag}_%`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ waiting: number }>("select count(*)::int as waiting from jobs where id like $1 and dispatched_at is null", [like]);
    if (rows[0]!.waiting === 0 || Date.now() > deadline) break;
    await sleep(200);
  }
  const { rows } = await pool.query<{ n: number; s: number }>(
    "select count(*)::int as n, extract(epoch from max(dispatched_at) - min(dispatched_at))::float8 as s from jobs where id like $1 and dispatched_at is not null",
    [like],
  );
  const { n, s } = rows[0]!;
  if (process.env.BENCH_VERBOSE) say(`drain ${tag}: ${n} dispatched in ${s} s`);
  return { n, seconds: s, rate: (n - 1) / s };
}

/** The task queue of `npm run stack:prod` (TEMPORAL_TASK_QUEUE's default). */
export const STACK_TASK_QUEUE = "agent-gateway";

/** Waits until no copy tagged `tag` is queued or running any more (the workers ran them). */
export async function settled(pool: pg.Pool, tag: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from jobs where id like $1 and status in ('queued', 'running')", [`job_bench_${tag}_%`]);
    if (rows[0]!.n === 0) return;
    await sleep(500);
  }
  throw new Error(`the ${tag} runs did not finish in ${timeoutMs / 1000} s`);
}

/**
 * A bare `client.workflow.start` loop: `n` starts of agentRun in LANES concurrent lanes, with
 * random workflow ids, or with `ids` (job ids: workflow id = job id, as the dispatcher starts them).
 */
export async function bareStarts(address: string, namespace: string, n: number, taskQueue: string, ids?: string[]): Promise<{ seconds: number; rate: number }> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (next < n) {
        const i = next++;
        const id = ids?.[i] ?? `bare-${i}-${randomBytes(4).toString("hex")}`;
        await client.workflow.start("agentRun", { taskQueue, workflowId: id, args: [id], workflowIdReusePolicy: "REJECT_DUPLICATE" });
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await connection.close();
  return { seconds, rate: n / seconds };
}

interface Topology {
  apiUrl: string;
  temporalAddress: string;
  databaseUrl: string;
  temporalNamespace?: string;
  processes: { role: string; name: string; url?: string }[];
}

/**
 * The production topology (`npm run stack:prod`: two API instances behind HAProxy, two workers,
 * the Temporal server on PostgreSQL) when this checkout has it; undefined otherwise. Starts it in
 * `dataDir`, waits for its topology.json, and returns it with a stop function.
 */
export async function startStack(root: string, dataDir: string): Promise<{ topology: Topology; stop: () => Promise<void> } | undefined> {
  const scripts = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts as Record<string, string>;
  if (!scripts["stack:prod"] || process.env.BENCH_STACK === "0") return undefined;
  say("starting npm run stack:prod (production topology)");
  const proc = startProcess("stack:prod", "npm", ["run", "-s", "stack:prod"], {
    cwd: root,
    group: true,
    env: { DATA_DIR: dataDir, PORT: String(await freePort()), OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, PROVIDER_A_API_KEY: "sk-unused", PROVIDER_B_API_KEY: "sk-unused", NODE_ENV: undefined },
  });
  const file = join(dataDir, "topology.json");
  const deadline = Date.now() + 600_000;
  let died = false;
  void proc.exited.then(() => (died = true));
  while (!existsSync(file)) {
    if (died) throw new Error("npm run stack:prod exited before writing topology.json (BENCH_VERBOSE=1 shows its output)");
    if (Date.now() > deadline) throw new Error("npm run stack:prod did not come up in 10 minutes");
    await sleep(500);
  }
  await sleep(2000); // topology.json is written once everything answers; let the pollers settle
  return { topology: JSON.parse(readFileSync(file, "utf8")) as Topology, stop: () => proc.stop("SIGTERM") };
}
