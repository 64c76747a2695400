import "reflect-metadata";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, Connection } from "@temporalio/client";
import { DefaultLogger, NativeConnection, Runtime, Worker } from "@temporalio/worker";
import { BENCHES, commandLine, loadNow, main, pct, provenance, say, sleep, startProcess, writeSection } from "./lib/harness.js";
import { startRunBackends } from "./lib/run-backends.js";
import { bareStarts, copyJobs, drain, kick } from "./lib/dispatch.js";
import { buildServer, commitOf, createTenant, graphql, OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, GATEWAY_LOG_LEVEL, startServe } from "./lib/gateway.js";

/**
 * `npm run bench:webhooks-breakdown`: where the time of one webhook → done goes, from the
 * workflow's own history (event times as the Temporal server records them) and the job row
 * (created_at = the ingest commit). One at a time, BENCH_SAMPLES samples after 5 warm-ups; prints
 * the median of each step, and writes them to BENCHMARKS.md ("## Webhook → done, step by step"; the commit is in its first line).
 * BENCH_BREAKDOWN=dispatch or =ingest: diagnosis runs that only print (a backlog drained by one
 * API vs the bare loop; ingest per scheme with the API's CPU use).
 */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const EVENT_NAMES: Record<number, string> = { 1: "WorkflowExecutionStarted", 2: "WorkflowExecutionCompleted", 5: "WorkflowTaskScheduled", 6: "WorkflowTaskStarted", 7: "WorkflowTaskCompleted", 10: "ActivityTaskScheduled", 11: "ActivityTaskStarted", 12: "ActivityTaskCompleted", 25: "MarkerRecorded" };
const SCRIPT = "export default async function run(input) { return { ok: true, n: input.n ?? null }; }";

await main(async () => {
  const loadAtStart = loadNow();
  const root = resolve(process.env.BENCH_GATEWAY_ROOT ?? process.cwd());
  const dir = mkdtempSync(join(tmpdir(), "agw-bench-bd-"));
  try {
    buildServer(root);
    const { pgServer, temporal, databaseUrl, pool } = await startRunBackends(root, dir);
    try {
      const env = { DATABASE_URL: databaseUrl, PROVIDER_A_API_KEY: "sk-unused", PROVIDER_B_API_KEY: "sk-unused", TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: "bench-run" };
      const api = await startServe("api", root, env);
      const worker = startProcess("worker", process.execPath, ["--enable-source-maps", "dist/src/entry/worker.js"], {
        cwd: root,
        env: { NODE_ENV: "production", OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, PUBLIC_BASE_URL: api.url.replace("http:", "https:"), LOG_LEVEL: GATEWAY_LOG_LEVEL, ...env, ...(process.env.SANDBOX_POOL_SIZE ? { SANDBOX_POOL_SIZE: process.env.SANDBOX_POOL_SIZE } : {}) },
      });
      const tenant = await createTenant(api.url, { model: "provider_a/model-2.5-flash", script: SCRIPT });
      const t = await graphql(api.url, tenant.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: tenant.agentId });
      const url = `${api.url}/api/triggers/${t.createTrigger.trigger.id}/webhook`;
      const connection = await Connection.connect({ address: temporal.address });
      const client = new Client({ connection });
      const steps = new Map<string, number[]>();
      const once = async (n: number, record: boolean) => {
        const t0 = Date.now();
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-trigger-secret": t.createTrigger.secret }, body: JSON.stringify({ n }) });
        const t202 = Date.now();
        const { job_id } = (await res.json()) as { job_id: string };
        const h = client.workflow.getHandle(job_id);
        for (;;) {
          try {
            await h.result();
            break;
          } catch {
            await sleep(2);
          }
        }
        if (!record) return;
        const { rows } = await pool.query("select created_at, started_at, finished_at, dispatched_at from jobs where id = $1", [job_id]);
        const at = (name: string, ms: number) => (steps.get(name) ?? steps.set(name, []).get(name)!).push(ms - t0);
        at("202 received by the client", t202);
        at("job committed (created_at)", rows[0].created_at.getTime());
        at("job started_at (beginRun)", rows[0].started_at.getTime());
        at("job finished_at (done)", rows[0].finished_at.getTime());
        await historySteps(h, t0, at);
      };
      const historySteps = async (h: { fetchHistory(): Promise<{ events?: any[] | null }> }, t0: number, at: (name: string, ms: number) => void) => {
        const seen = new Map<string, number>();
        for (const e of (await h.fetchHistory()).events ?? []) {
          const type = EVENT_NAMES[Number(e.eventType)] ?? String(e.eventType);
          const k = seen.get(type) ?? 0;
          seen.set(type, k + 1);
          const ms = Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
          at(`history ${e.eventId} ${type}${k ? ` #${k + 1}` : ""}`, ms);
        }
      };
      if (process.env.BENCH_BREAKDOWN === "ingest") {
        // Ingest per scheme at 1 KB, 50 connections, 8 s each, with the CPU time each process used.
        await worker.stop();
        const { createHmac, randomBytes } = await import("node:crypto");
        const autocannon = (await import("autocannon")).default;
        const body = JSON.stringify({ event: "x", pad: "x".repeat(1000) });
        const secret: string = t.createTrigger.secret;
        const key = Buffer.from(secret.slice("whsec_".length), "base64");
        const run = randomBytes(4).toString("hex");
        let n = 0;
        /** utime + stime of a process, in ms (clock ticks of 10 ms). */
        const cpu = (pid: number) => {
          const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
          return (Number(f[11]) + Number(f[12])) * 10;
        };
        for (const scheme of (process.env.BENCH_SCHEMES ?? "secret,secret-key,standard").split(",")) {
          const sign = (): Record<string, string> => {
            if (scheme === "secret") return { "x-trigger-secret": secret };
            // x-trigger-secret with a fresh Idempotency-Key: the idempotency record without the signature check.
            if (scheme === "secret-key") return { "x-trigger-secret": secret, "idempotency-key": `k_${run}_${n++}` };
            const ts = String(Math.floor(Date.now() / 1000));
            const id = `msg_${run}_${n++}`;
            const sig = `v1,${createHmac("sha256", key).update(`${id}.${ts}.`).update(body).digest("base64")}`;
            return { "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig };
          };
          const pidCpu0 = cpu(api.pid);
          const r = await autocannon({ url, method: "POST", body, connections: Number(process.env.BENCH_CONNECTIONS ?? 50), duration: Number(process.env.BENCH_DURATION ?? 8), headers: { "content-type": "application/json" }, requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, "content-type": "application/json", ...sign() } }) }] });
          say(`ingest ${scheme}: ${r.requests.average.toFixed(0)}/s p50 ${r.latency.p50} ms, errors ${r.non2xx + r.errors}, api cpu ${((cpu(api.pid) - pidCpu0) / 8000 * 100).toFixed(0)}%`);
        }
        await api.proc.stop();
        await connection.close();
        await pool.end();
        return;
      }
      if (process.env.BENCH_BREAKDOWN === "dispatch") {
        // A backlog drained by one API instance (BENCH_GATEWAY_NODE_ARGS=--cpu-prof profiles it) vs the bare loop.
        await once(-1, false);
        await api.proc.stop();
        await worker.stop();
        const sample = (await pool.query<{ id: string }>("select id from jobs order by created_at desc limit 1")).rows[0]!.id;
        for (const round of [1, 2]) {
          await copyJobs(pool, sample, `d${round}`, 2000);
          const a = await startServe("api (dispatch)", root, { ...env, TEMPORAL_TASK_QUEUE: `nobody-${round}` });
          await kick(a.url, t.createTrigger.trigger.id, t.createTrigger.secret);
          const d = await drain(pool, `d${round}`);
          await a.proc.stop();
          const b = await bareStarts(temporal.address, "default", 2000, `bare-${round}`);
          say(`dispatch round ${round}: dispatcher ${d.rate.toFixed(0)}/s, bare ${b.rate.toFixed(0)}/s (${(d.rate / b.rate).toFixed(2)}x)`);
        }
        await connection.close();
        await pool.end();
        return;
      }
      const tables: string[] = [];
      const report = (title: string) => {
        say(title);
        const sorted = [...steps.entries()].sort((a, b) => pct(a[1], 50) - pct(b[1], 50));
        for (const [name, xs] of sorted) say(`${String(pct(xs, 50).toFixed(0)).padStart(5)} ms p50 (${pct(xs, 90).toFixed(0)} p90)  ${name}`);
        tables.push(`${title}`, "", "| ms after the send (p50) | p90 | step |", "|---|---|---|", ...sorted.map(([name, xs]) => `| ${pct(xs, 50).toFixed(0)} | ${pct(xs, 90).toFixed(0)} | ${name} |`), "");
        steps.clear();
      };
      for (let i = 0; i < 5; i++) await once(-1, false);
      for (let i = 0; i < SAMPLES; i++) await once(i, true);
      report("webhook → done:");
      // The bare one-activity workflow, its worker in this process (as bench:webhooks runs it).
      Runtime.install({ logger: new DefaultLogger("WARN") });
      const native = await NativeConnection.connect({ address: temporal.address });
      const floorWorker = await Worker.create({ connection: native, taskQueue: "bd-floor", workflowsPath: fileURLToPath(new URL("./webhooks-workflows.ts", import.meta.url)), activities: { async noop() {} } });
      const floorRun = floorWorker.run();
      for (let i = 0; i < SAMPLES + 5; i++) {
        const t0 = Date.now();
        const h = await client.workflow.start("benchNoop", { taskQueue: "bd-floor", workflowId: `bd-floor-${i}-${Date.now()}` });
        await h.result();
        if (i >= 5) await historySteps(h, t0, (name, ms) => (steps.get(name) ?? steps.set(name, []).get(name)!).push(ms - t0));
      }
      report("bare one-activity workflow:");
      floorWorker.shutdown();
      await floorRun;
      await native.close();
      writeSection(
        BENCHES.webhooksBreakdown,
        [
          provenance(commandLine("bench:webhooks-breakdown"), loadAtStart) + ` Commit ${commitOf(root)}${process.env.SANDBOX_POOL_SIZE ? `, worker with SANDBOX_POOL_SIZE=${process.env.SANDBOX_POOL_SIZE}` : ""}.`,
          "",
          `One at a time, ${SAMPLES} samples after 5 warm-ups; Temporal dev server, PostgreSQL with fsync on, \`npm run serve\` and \`npm run worker\` from dist/.`,
          "Times are from the client's send to each event as the server recorded it in the workflow's history, and to the job row's stamps",
          "(created_at = the ingest commit). The bare workflow (one no-op activity) runs on a worker in the bench process.",
          "",
          ...tables,
        ].join("\n"),
      );
      await connection.close();
      await api.proc.stop();
      await worker.stop();
      await pool.end();
    } finally {
      await temporal.stop().catch(() => {});
      await pgServer.stop().catch(() => {});
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
