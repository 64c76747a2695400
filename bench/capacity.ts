import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { loadAutocannon } from "./lib/node-peers.js";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import { firstLine, loadNow, main, say, sleep, startProcess } from "./lib/harness.js";
import { startRunBackends } from "./lib/run-backends.js";
import { buildServer, commitOf, createTenant, graphql, GATEWAY_LOG_LEVEL, OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, startServe } from "./lib/gateway.js";
import { delta, machineTicks, postgresCpuMs, processCpuMs, postmasterPid, sampleWaits, snapshot, statementNamer, statementStats, STATS_SETTLE_MS, walByKind, type Delta } from "./lib/pg-stats.js";
import { report, write, type Cell, type OpResult } from "./lib/capacity-report.js";
import { sqlNames } from "../src/db/names.js";
import { Account } from "../src/db/schema.js";

const autocannon = await loadAutocannon();

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

const chatBody = (stream: boolean, threadId?: string) =>
  JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Say hello in five words." }], max_tokens: 64, ...(stream ? { stream: true } : {}), ...(threadId ? { thread_id: threadId } : {}) });

type Requests = NonNullable<Parameters<typeof autocannon>[0]["requests"]>;

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
      write(report({ plan: { duration: DURATION, tenants: TENANTS, turnsPerThread: TURNS_PER_THREAD }, ops, cells, background, name, settings, floor, loadAtStart, commit: commitOf(root) }));
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
