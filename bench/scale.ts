import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCHES, commandLine, firstLine, loadNow, main, pct, provenance, say, sleep, startProcess, writeSection } from "./lib/harness.js";
import { startRunBackends } from "./lib/run-backends.js";
import { buildServer, commitOf, createTenant, graphql, GATEWAY_LOG_LEVEL, OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, startServe } from "./lib/gateway.js";
import { countRows, growTo, SCALE_TABLES, type ScaleTenants } from "./lib/scale-load.js";
import { jobEventsSince } from "../src/jobs/store.js";

/**
 * `npm run bench:scale`: whether every read and write stays flat as the tables grow (issue 33).
 * The stack as bench:capacity runs it (serve and worker from dist/, durable PostgreSQL, Temporal
 * dev server, the mock upstream). About a thousand rows are made through the API (chat turns and
 * continuations, webhook runs, A2A sends to a chat and an automation agent); then, for each size
 * of BENCH_SCALE_SIZES (1000,100000,1000000), every table is grown to about that many rows by
 * bulk copies of those rows (bench/lib/scale-load.ts) and each operation is timed BENCH_SCALE_REPS
 * (30) times one after the other. The growth ratio is the largest size's p50 over the smallest's.
 * A retention run (the operator's runRetention, on the worker) is timed at each size with
 * requests going on: their p95 during the run against their p95 just before.
 * Env: BENCH_SCALE_SIZES, BENCH_SCALE_REPS, BENCH_WRITE=0 (print only), BENCH_SKIP_BUILD=1.
 */
const SIZES = String(process.env.BENCH_SCALE_SIZES ?? "1000,100000,1000000").split(",").map(Number).filter((n) => n > 0).sort((a, b) => a - b);
const REPS = Number(process.env.BENCH_SCALE_REPS ?? 30);
const MODEL = "provider_b/model-sonnet-4-6";
const SCRIPT = "export default async function run(input) { return { ok: true, n: input.n ?? null }; }";
const DAY = 86_400_000;

type Op = { name: string; note?: string; run: () => Promise<unknown> };

await main(async () => {
  const loadAtStart = loadNow();
  const root = process.cwd();
  const dir = mkdtempSync(join(tmpdir(), "agw-bench-scale-"));
  try {
    buildServer(root);
    const { line } = await firstLine((onStdout) => startProcess("mock", process.execPath, ["--import", "@swc-node/register/esm-register", "bench/chat-mock.ts"], { onStdout }));
    const mockOrigin = `http://127.0.0.1:${line}`;
    say("starting PostgreSQL (durable settings) and a Temporal dev server");
    const { pgServer, temporal, databaseUrl, pool } = await startRunBackends(root, dir);
    try {
      const env = { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: "bench-scale", PROVIDER_A_API_KEY: "sk-mock", PROVIDER_A_BASE_URL: mockOrigin, PROVIDER_B_API_KEY: "sk-mock", PROVIDER_B_BASE_URL: mockOrigin };
      const api = await startServe("api", root, env);
      startProcess("worker", process.execPath, ["--enable-source-maps", "dist/src/entry/worker.js"], {
        cwd: root,
        env: { NODE_ENV: "production", OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, PUBLIC_BASE_URL: api.url.replace("http:", "https:"), LOG_LEVEL: GATEWAY_LOG_LEVEL, ...env },
      });
      const chat = await createTenant(api.url, { model: MODEL });
      const runs = await createTenant(api.url, { model: MODEL, script: SCRIPT });
      const trig = (await graphql(api.url, runs.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: runs.agentId })).createTrigger;
      const post = async (path: string, body: unknown, headers: Record<string, string>) => {
        const r = await fetch(`${api.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
        const text = await r.text();
        if (r.status >= 300) throw new Error(`${path} answered ${r.status}: ${text.slice(0, 300)}`);
        return { status: r.status, text };
      };
      const turn = async (threadId?: string) => {
        const body = { model: MODEL, messages: [{ role: "user", content: "Say hello in five words." }], max_tokens: 64, ...(threadId ? { thread_id: threadId } : {}) };
        return /"thread_id":"([^"]+)"/.exec((await post("/api/v1/chat/completions", body, { authorization: `Bearer ${chat.apiKey}` })).text)![1]!;
      };
      const webhook = async (n: number) => JSON.parse((await post(`/api/triggers/${trig.trigger.id}/webhook`, { n }, { "x-trigger-secret": trig.secret })).text).job_id as string;
      const a2a = async (agentId: string, key: string, method: string, params: unknown) =>
        JSON.parse((await post(`/api/a2a/${agentId}`, { jsonrpc: "2.0", id: 1, method, params }, { authorization: `Bearer ${key}`, "A2A-Version": "1.0" })).text);
      const runsKey = (await graphql(api.url, runs.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "a2a") { key } }`, { a: runs.agentId })).createApiKey.key as string;
      const send = (agentId: string, key: string) => a2a(agentId, key, "SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] } });

      say("making rows through the API (chat turns and continuations, webhook runs, A2A sends)");
      const threads: string[] = [];
      for (let i = 0; i < 100; i++) threads.push(await turn());
      for (const t of threads) await turn(t);
      const jobs: string[] = [];
      for (let i = 0; i < 150; i++) jobs.push(await webhook(i));
      for (let i = 0; i < 40; i++) await send(chat.agentId, chat.apiKey);
      for (let i = 0; i < 40; i++) await send(runs.agentId, runsKey);
      for (;;) {
        const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from jobs where status in ('queued', 'running')");
        if (rows[0]!.n === 0) break;
        await sleep(500);
      }
      const made = await countRows(pool);
      say(`made through the API: ${JSON.stringify(made)}`);
      const tenants: ScaleTenants = { chat: { accountId: chat.accountId, agentId: chat.agentId }, runs: { accountId: runs.accountId, agentId: runs.agentId } };

      const gq = (token: string, q: string, v: Record<string, unknown> = {}) => graphql(api.url, token, q, v);
      const page2 = async (token: string, q: string, pick: (d: any) => { pageInfo: { endCursor: string } }) => gq(token, q, { after: pick(await gq(token, q, { after: null })).pageInfo.endCursor });
      const JOBS = `query($after: String) { jobs(first: 50, after: $after) { edges { node { id status } } pageInfo { endCursor } } }`;
      const LEDGER = `query($after: String) { ledger(first: 50, after: $after) { edges { node { id amount } } pageInfo { endCursor } } }`;
      const THREADS = `query($after: String) { agent(id: "${chat.agentId}") { threads(first: 50, after: $after) { edges { node { id } } pageInfo { endCursor } } } }`;
      const MESSAGES = `query($after: String) { thread(id: "${threads[0]}") { messages(first: 50, after: $after) { edges { node { content } } pageInfo { endCursor } } } }`;
      const usage = (groupBy: string[]) => () =>
        gq(chat.adminToken, `query($f: DateTimeISO!, $t: DateTimeISO!, $g: [UsageDimension!]!) { usage(from: $f, to: $t, groupBy: $g) { cost requests } }`, {
          f: new Date(Date.now() - 40 * DAY - 1234).toISOString(), t: new Date().toISOString(), g: groupBy,
        });
      const list = (agentId: string, key: string, status?: string) => () => a2a(agentId, key, "ListTasks", { pageSize: 50, ...(status ? { status } : {}) });
      let n = 0;
      const ops: Op[] = [
        { name: "jobs, first page", run: () => gq(runs.adminToken, JOBS, { after: null }) },
        { name: "jobs, pages 1 and 2 (keyset)", run: () => page2(runs.adminToken, JOBS, (d) => d.jobs) },
        { name: "ledger, first page", run: () => gq(chat.adminToken, LEDGER, { after: null }) },
        { name: "ledger, pages 1 and 2", run: () => page2(chat.adminToken, LEDGER, (d) => d.ledger) },
        { name: "Agent.threads, first page", run: () => gq(chat.adminToken, THREADS, { after: null }) },
        { name: "Agent.threads, pages 1 and 2", run: () => page2(chat.adminToken, THREADS, (d) => d.agent.threads) },
        { name: "Thread.messages, first page", run: () => gq(chat.adminToken, MESSAGES, { after: null }) },
        { name: "usage, whole period", run: usage([]) },
        { name: "usage by agent and day", run: usage(["AGENT", "DAY"]) },
        { name: "ListTasks, chat agent", run: list(chat.agentId, chat.apiKey) },
        { name: "ListTasks, chat agent, status filter", run: list(chat.agentId, chat.apiKey, "TASK_STATE_COMPLETED") },
        { name: "ListTasks, automation agent", run: list(runs.agentId, runsKey) },
        { name: "ListTasks, automation agent, status filter", run: list(runs.agentId, runsKey, "TASK_STATE_COMPLETED") },
        { name: "thread continuation (chat turn)", run: () => turn(threads[1 + (n++ % 90)]) },
        { name: "webhook 202", run: () => webhook(-1) },
        { name: "jobEventsSince (last minute)", note: "data layer", run: () => jobEventsSince(pool, new Date(Date.now() - 60_000)) },
      ];
      const timeOp = async (op: () => Promise<unknown>, reps: number) => {
        for (let i = 0; i < 3; i++) await op();
        const ms: number[] = [];
        for (let i = 0; i < reps; i++) {
          const t0 = performance.now();
          await op();
          ms.push(performance.now() - t0);
        }
        return ms;
      };

      const results = new Map<string, Map<number, { p50: number; p95: number }>>();
      const counts = new Map<number, Record<string, number>>();
      const retention = new Map<number, { seconds: number; payloads: number; batches: number; p95Before: number; p95During: number; load: string }>();
      const ran: number[] = [];
      /** Writes the section for the sizes run so far: a run stopped at a larger size keeps the smaller ones. */
      const writeReport = () => {
        const first = ran[0]!;
        const last = ran[ran.length - 1]!;
        const fmt = (x: number | undefined) => (x === undefined ? "–" : x.toFixed(1));
        const head = `| Operation | ${ran.map((s) => `p50 / p95 at ${s.toLocaleString("en")} (ms)`).join(" | ")} | growth (p50 ${last.toLocaleString("en")} / ${first.toLocaleString("en")}) |`;
        const rows = [...results].map(([name, by]) => {
          const note = ops.find((o) => o.name === name)?.note;
          return `| ${name}${note ? ` (${note})` : ""} | ${ran.map((s) => `${fmt(by.get(s)?.p50)} / ${fmt(by.get(s)?.p95)}`).join(" | ")} | ${(by.get(last)!.p50 / by.get(first)!.p50).toFixed(2)}× |`;
        });
        const tableRows = SCALE_TABLES.map((t) => `| ${t} | ${ran.map((s) => counts.get(s)![t]!.toLocaleString("en")).join(" | ")} |`);
        const ret = ran.map((s) => {
          const r = retention.get(s)!;
          return `| ${s.toLocaleString("en")} | ${r.seconds.toFixed(1)} | ${r.payloads.toLocaleString("en")} | ${r.batches} | ${r.p95Before.toFixed(1)} | ${r.p95During.toFixed(1)} | ${r.load} |`;
        });
        const skipped = SIZES.length === ran.length ? "" : ` Sizes asked for but not run: ${SIZES.filter((s) => !ran.includes(s)).join(", ")}.`;
        writeSection(
          BENCHES.scale,
          [
            provenance(commandLine("bench:scale"), loadAtStart) + ` Commit ${commitOf(root)}.`,
            "",
            `Sizes run: ${ran.map((s) => s.toLocaleString("en")).join(", ")} rows per table.${skipped} Rows made through the API first (${made.threads} threads, ${made.messages} messages, ${made.jobs} jobs, ${made.ledger_entries} ledger rows, ${made.a2a_tasks} A2A tasks: chat turns and continuations, webhook runs, A2A sends), then bulk-copied with new ids and creation times spread over 30–33 days (\`INSERT … SELECT\` through the same tables, constraints and the usage_rollups trigger: bench/lib/scale-load.ts). All on one account per tenant: the chat tenant's ledger, threads and chat tasks; the automation tenant's jobs, audit entries and job tasks. ${REPS} requests per operation, one after the other, after 3 warm-ups; times are the client's, through HTTP (except jobEventsSince, called through the data layer).`,
            "",
            "Rows per table:",
            "",
            `| Table | ${ran.map((s) => s.toLocaleString("en")).join(" | ")} |`,
            `| --- | ${ran.map(() => "---:").join(" | ")} |`,
            ...tableRows,
            "",
            head,
            `| --- | ${ran.map(() => "---:").join(" | ")} | ---: |`,
            ...rows,
            "",
            "Retention run at each size (the operator's `runRetention`, on the worker, RETENTION_BATCH_SIZE 1000), with the jobs list and webhooks requested one after the other meanwhile:",
            "",
            "| Size | Run (s) | Payloads purged | Batches | p95 before (ms) | p95 during (ms) | load (1 min) |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            ...ret,
          ].join("\n"),
        );
      };
      for (const size of SIZES) {
        say(`growing every table to about ${size} rows`);
        const t0 = performance.now();
        await growTo(pool, tenants, size);
        counts.set(size, await countRows(pool));
        say(`loaded in ${((performance.now() - t0) / 1000).toFixed(0)} s: ${JSON.stringify(counts.get(size))}; load ${loadNow().join(" ")}`);
        for (const op of ops) {
          const ms = await timeOp(op.run, REPS);
          if (!results.has(op.name)) results.set(op.name, new Map());
          results.get(op.name)!.set(size, { p50: pct(ms, 50), p95: pct(ms, 95) });
          if (process.env.BENCH_VERBOSE === "1") say(`${size} ${op.name}: p50 ${pct(ms, 50).toFixed(1)} ms`);
        }
        // Retention with requests going on: the jobs list and webhooks, before and during the run.
        const concurrent = () => (n++ % 2 ? gq(runs.adminToken, JOBS, { after: null }) : webhook(-2));
        const before = await timeOp(concurrent, REPS);
        const r0 = performance.now();
        const id = (await gq(OPERATOR_TOKEN, `mutation { runRetention { id } }`)).runRetention.id as string;
        const during: number[] = [];
        let run: { status: string; payloads: number; batches: number } | undefined;
        for (;;) {
          const t = performance.now();
          await concurrent();
          during.push(performance.now() - t);
          run = (await gq(OPERATOR_TOKEN, `{ retentionRuns(first: 5) { id status payloads batches } }`)).retentionRuns.find((x: { id: string }) => x.id === id);
          if (run && run.status !== "running") break;
        }
        retention.set(size, { seconds: (performance.now() - r0) / 1000, payloads: run!.payloads, batches: run!.batches, p95Before: pct(before, 95), p95During: pct(during, 95), load: loadNow()[0]! });
        ran.push(size);
        writeReport();
      }

      await pool.end();
    } finally {
      await temporal.stop().catch(() => {});
      await pgServer.stop().catch(() => {});
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
