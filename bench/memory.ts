import "reflect-metadata";
import { execSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAutocannon } from "./lib/node-peers.js";
import { BENCHES, commandLine, firstLine, loadNow, main, provenance, say, sleep, startProcess, waitForHttp, writeSection } from "./lib/harness.js";
import { startRunBackends } from "./lib/run-backends.js";
import type { BenchPostgres } from "./lib/postgres.js";
import { buildServer, commitOf, createTenant, graphql, GATEWAY_LOG_LEVEL, migrateWithDist, OPERATOR_TOKEN, SECRET_ENCRYPTION_KEY, startDevLauncher, startServe } from "./lib/gateway.js";
import { descendantWith, importCosts, sample, sampler, type MemSample } from "./lib/memory-sample.js";
import { freePort } from "../src/dev/free-port.js";
import { SANDBOX_IDLE_RETIRE_MS } from "../src/sandbox/pool.js";

const autocannon = await loadAutocannon();

/**
 * `npm run bench:memory`: how much memory `npm run serve` and `npm run worker` hold (measured apart,
 * each its own process, from dist/ with NODE_ENV=production), at idle, under load and after it, and
 * `npm start` (API and worker in one process) for comparison; then what loading the code costs,
 * layer by layer. The figures of docs/capacity.md's "Memory" section.
 *
 * Per process: VmRSS (anonymous and file-backed parts) and VmHWM from /proc/<pid>/status, V8's
 * heap of the main thread from prom-client's default metrics (the API's /metrics, the worker's
 * WORKER_METRICS_PORT). Phases: started (idle BENCH_IDLE s after readiness, no request yet); under
 * BENCH_DURATION s of autocannon at BENCH_CONNECTIONS on chat completions (zero-think-time mock
 * upstream, provider_b path; the highest RSS sampled every 500 ms); BENCH_RUNS webhook runs of a
 * trivial script (BENCH_RUN_LANES in flight; highest RSS); BENCH_IDLE s after the load, and again
 * once the sandbox threads have been idle past SANDBOX_IDLE_RETIRE_MS.
 * Env: BENCH_DURATION (30), BENCH_CONNECTIONS (50), BENCH_RUNS (200), BENCH_RUN_LANES (3), BENCH_IDLE (30),
 * BENCH_BASELINE=<git rev> (also serve + worker of that revision, built from `git archive`, first), BENCH_DEV=0 (skip npm start), BENCH_SERVE_ENV / BENCH_WORKER_ENV (JSON, extra environment for one
 * process: a knob's effect), BENCH_SECTION (heading suffix), BENCH_WRITE=0, BENCH_SKIP_BUILD=1.
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 30);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const IDLE_MS = Number(process.env.BENCH_IDLE ?? 30) * 1000;
// As many in flight as the worker has sandboxes (SANDBOX_POOL_SIZE, 3): more wait for a run slot
// in their workflow, backing off, and the phase takes minutes without holding more memory.
const RUN_LANES = Number(process.env.BENCH_RUN_LANES ?? 3);
const WITH_DEV = process.env.BENCH_DEV !== "0";
/** A git revision measured first, the same way, for before/after figures from one run. */
const BASELINE = process.env.BENCH_BASELINE;
const MODEL = "provider_b/model-sonnet-4-6";
const SCRIPT = "export default async function run(input) { return { ok: true, n: input.n ?? null }; }";
const extraEnv = (name: string): Record<string, string> => JSON.parse(process.env[name] ?? "{}") as Record<string, string>;

interface Watched {
  name: string;
  pid: number;
  metricsUrl?: string;
}
interface PhaseRow {
  phase: string;
  mem: Map<string, MemSample>;
  note?: string;
}

const f0 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "—" : x.toFixed(0));

await main(async () => {
  const loadAtStart = loadNow();
  const root = process.cwd();
  const dir = mkdtempSync(join(tmpdir(), "agw-bench-memory-"));
  try {
    buildServer(root);
    // npm start would otherwise build the web console in its own process (Vite) and be measured with it.
    if (WITH_DEV && !existsSync(join(root, "dist/web/index.html"))) execSync("npm run -s build:web", { cwd: root, stdio: "inherit" });
    const { line } = await firstLine((onStdout) => startProcess("mock", process.execPath, ["--import", "@swc-node/register/esm-register", "bench/chat-mock.ts"], { onStdout }));
    const mockOrigin = `http://127.0.0.1:${line}`;
    say("starting PostgreSQL (durable settings) and a Temporal dev server");
    const { pgServer, temporal, databaseUrl, pool } = await startRunBackends(root, dir);
    try {
      const upstream = { PROVIDER_A_API_KEY: "sk-mock", PROVIDER_A_BASE_URL: mockOrigin, PROVIDER_B_API_KEY: "sk-mock", PROVIDER_B_BASE_URL: mockOrigin };
      const rows: PhaseRow[][] = [];
      let baseRoot: string | undefined;
      let baseLabel = "";
      if (BASELINE) {
        // The build before the change, measured first on the same servers (its own database and queue).
        baseRoot = join(dir, "baseline");
        mkdirSync(baseRoot);
        execSync(`git archive ${BASELINE} | tar -x -C ${baseRoot}`, { cwd: root });
        symlinkSync(join(root, "node_modules"), join(baseRoot, "node_modules"));
        buildServer(baseRoot);
        // npm start builds a missing web console in its own process first (Vite): both launchers get the built one.
        if (existsSync(join(root, "dist/web"))) cpSync(join(root, "dist/web"), join(baseRoot, "dist/web"), { recursive: true });
        await pgServer.createDatabase("base");
        migrateWithDist(baseRoot, pgServer.url("base"));
        baseLabel = execSync(`git rev-parse --short ${BASELINE}`, { cwd: root, encoding: "utf8" }).trim();
        rows.push(await serveAndWorker(baseRoot, baseLabel, { DATABASE_URL: pgServer.url("base"), TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: "bench-memory-base", ...upstream }, pgServer.url("base")));
      }
      const commit = commitOf(root);
      rows.push(await serveAndWorker(root, commit, { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: "bench-memory", ...upstream }, databaseUrl));

      const devRows: PhaseRow[][] = [];
      if (WITH_DEV) for (const [devRoot, label] of [...(baseRoot ? [[baseRoot, baseLabel] as const] : []), [root, commit] as const]) devRows.push(await devLauncher(devRoot, label, upstream, pgServer, temporal.address, join(dir, `dev-${label}`)));

      say("import costs, layer by layer");
      const serveChain = importCosts(root, ["dist/src/runtime/runtime.js", "dist/src/app/api.js"]);
      const workerChain = importCosts(root, ["dist/src/runtime/runtime.js", "@temporalio/worker", "dist/src/temporal/worker.js"]);
      write({ rows, devRows, serveChain, workerChain, loadAtStart, commit });
    } finally {
      await pool.end().catch(() => {});
      await temporal.stop().catch(() => {});
      await pgServer.stop().catch(() => {});
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `npm start` of the checkout at `root` (API and worker in one process) through the phases, on its own database and task queue. */
async function devLauncher(root: string, label: string, upstream: Record<string, string>, pgServer: BenchPostgres, temporalAddress: string, dataDir: string): Promise<PhaseRow[]> {
  say(`npm start of ${label}`);
  const db = `dev_${label.replace(/\W/g, "_")}`;
  await pgServer.createDatabase(db);
  const queue = `bench-memory-${db}`;
  const dev = await startDevLauncher(`npm start ${label}`, root, dataDir, { ...upstream, DATABASE_URL: pgServer.url(db), TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: queue });
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: pgServer.url(db), max: 2 });
  try {
    const pid = descendantWith(dev.pid, "src/dev/start.ts");
    if (!pid) throw new Error("could not find the npm start node process");
    return await phases([{ name: `npm start (${label})`, pid, metricsUrl: `${dev.url}/metrics` }], dev.url, pool, queue);
  } finally {
    await pool.end();
    await dev.proc.stop();
  }
}

/** `npm run serve` and `npm run worker` of the build at `root`, each its own process, through the phases; then stopped. */
async function serveAndWorker(root: string, label: string, env: Record<string, string>, databaseUrl: string): Promise<PhaseRow[]> {
  say(`serve + worker of ${label}`);
  const api = await startServe(`serve ${label}`, root, { ...env, ...extraEnv("BENCH_SERVE_ENV") });
  const workerPort = await freePort();
  const worker = startProcess(`worker ${label}`, process.execPath, ["--enable-source-maps", "dist/src/entry/worker.js"], {
    cwd: root,
    env: {
      NODE_ENV: "production",
      OPERATOR_TOKEN,
      SECRET_ENCRYPTION_KEY,
      PUBLIC_BASE_URL: api.url.replace("http:", "https:"),
      LOG_LEVEL: GATEWAY_LOG_LEVEL,
      WORKER_METRICS_PORT: String(workerPort),
      HOST: "127.0.0.1",
      ...env,
      ...extraEnv("BENCH_WORKER_ENV"),
    },
  });
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const workerMetrics = `http://127.0.0.1:${workerPort}/metrics`;
    await waitForHttp(workerMetrics, { proc: worker });
    const watched: Watched[] = [
      { name: `serve (${label})`, pid: api.pid, metricsUrl: `${api.url}/metrics` },
      { name: `worker (${label})`, pid: worker.child.pid!, metricsUrl: workerMetrics },
    ];
    return await phases(watched, api.url, pool, env.TEMPORAL_TASK_QUEUE!);
  } finally {
    await pool.end();
    await worker.stop();
    await api.proc.stop();
  }
}

/** The four phases against one gateway (serve + worker, or npm start), every watched process sampled in each. */
async function phases(watched: Watched[], url: string, pool: import("pg").Pool, queue: string): Promise<PhaseRow[]> {
  const rows: PhaseRow[] = [];
  const snap = async () => new Map(await Promise.all(watched.map(async (w) => [w.name, await sample(w.pid, w.metricsUrl)] as const)));
  const during = async <T>(f: () => Promise<T>): Promise<{ mem: Map<string, MemSample>; value: T }> => {
    const ss = watched.map((w) => [w.name, sampler(w.pid, w.metricsUrl)] as const);
    const value = await f();
    const mem = new Map<string, MemSample>();
    for (const [name, s] of ss) {
      const { max, maxHeapUsed } = await s.stop();
      mem.set(name, { ...max, heapUsed: maxHeapUsed || max.heapUsed });
    }
    return { mem, value };
  };

  await sleep(IDLE_MS);
  rows.push({ phase: `started, idle ${IDLE_MS / 1000} s (no request yet)`, mem: await snap() });
  say(`started: ${[...rows[0]!.mem].map(([n, m]) => `${n} ${f0(m.rss)} MB`).join(", ")}`);

  const chat = await createTenant(url, { model: MODEL });
  const runs = await createTenant(url, { model: MODEL, script: SCRIPT });
  const trig = await graphql(url, runs.adminToken, `mutation($a: ID!) { createTrigger(agentId: $a) { trigger { id } secret } }`, { a: runs.agentId });
  const body = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Say hello in five words." }], max_tokens: 64 });
  const load = await during(() =>
    autocannon({ url: `${url}/api/v1/chat/completions`, method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${chat.apiKey}` }, body, connections: CONNECTIONS, duration: DURATION }),
  );
  const errors = load.value.non2xx + load.value.errors + load.value.timeouts;
  rows.push({ phase: `chat completions, ${CONNECTIONS} connections × ${DURATION} s (highest RSS)`, mem: load.mem, note: `${load.value.requests.average.toFixed(0)} req/s, ${errors} errors` });
  say(`chat load: ${[...load.mem].map(([n, m]) => `${n} ${f0(m.rss)} MB`).join(", ")}; ${rows.at(-1)!.note}`);

  const hook = `${url}/api/triggers/${trig.createTrigger.trigger.id}/webhook`;
  const done = async () => (await pool.query<{ n: number }>("select count(*)::int as n from jobs where status in ('done', 'failed') and agent_id = $1", [runs.agentId])).rows[0]!.n;
  const t0 = performance.now();
  const webhook = await during(async () => {
    let next = 0;
    const lane = async () => {
      while (next < RUNS) {
        const n = next++;
        const r = await fetch(hook, { method: "POST", headers: { "content-type": "application/json", "x-trigger-secret": trig.createTrigger.secret }, body: JSON.stringify({ n }) });
        await r.arrayBuffer();
        if (r.status !== 202 && r.status !== 200) throw new Error(`webhook answered ${r.status}`);
      }
    };
    await Promise.all(Array.from({ length: RUN_LANES }, lane));
    const deadline = Date.now() + 600_000;
    while ((await done()) < RUNS && Date.now() < deadline) await sleep(250);
    return done();
  });
  rows.push({ phase: `${RUNS} webhook runs, ${RUN_LANES} in flight (highest RSS)`, mem: webhook.mem, note: `${webhook.value} done in ${((performance.now() - t0) / 1000).toFixed(1)} s (queue ${queue})` });
  say(`webhook runs: ${[...webhook.mem].map(([n, m]) => `${n} ${f0(m.rss)} MB`).join(", ")}; ${rows.at(-1)!.note}`);

  await sleep(IDLE_MS);
  rows.push({ phase: `${IDLE_MS / 1000} s after the load`, mem: await snap() });
  // Past the sandbox threads' idle time (SANDBOX_IDLE_RETIRE_MS, a minute) since the last run.
  const retired = Math.max(0, SANDBOX_IDLE_RETIRE_MS + 15_000 - IDLE_MS);
  await sleep(retired);
  rows.push({ phase: `${(IDLE_MS + retired) / 1000} s after the load (sandbox threads idle past their minute)`, mem: await snap() });
  return rows;
}

function write(r: { rows: PhaseRow[][]; devRows: PhaseRow[][]; serveChain: ReturnType<typeof importCosts>; workerChain: ReturnType<typeof importCosts>; loadAtStart: string[]; commit: string }): void {
  const table = (rows: PhaseRow[]) => {
    const names = [...rows[0]!.mem.keys()];
    const out = ["| process | phase | RSS MB | anonymous | file-backed | peak RSS (VmHWM) | V8 heap used / total | external | threads | |", "|---|---|---|---|---|---|---|---|---|---|"];
    for (const name of names)
      for (const row of rows) {
        const m = row.mem.get(name)!;
        out.push(`| ${name} | ${row.phase} | **${f0(m.rss)}** | ${f0(m.anon)} | ${f0(m.file)} | ${f0(m.peak)} | ${f0(m.heapUsed)} / ${f0(m.heapTotal)} | ${f0(m.external)} | ${m.threads} | ${row.note ?? ""} |`);
      }
    return out.join("\n");
  };
  const spaces = (rows: PhaseRow[]) =>
    [...rows[0]!.mem.keys()]
      .map((name) => {
        const s = rows.at(-1)!.mem.get(name)!.spaces ?? {};
        return `- ${name}, after the load: ${Object.entries(s).filter(([, v]) => v >= 1).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ")} (MB used)`;
      })
      .join("\n");
  const chain = (c: ReturnType<typeof importCosts>) =>
    c.map((x, i) => `${x.module} ${x.rss.toFixed(0)} MB RSS / ${x.heap.toFixed(0)} MB heap${i ? ` (+${(x.rss - c[i - 1]!.rss).toFixed(0)} / +${(x.heap - c[i - 1]!.heap).toFixed(0)})` : ""}`).join(" → ");
  const serveEnv = process.env.BENCH_SERVE_ENV ? ` serve with ${process.env.BENCH_SERVE_ENV};` : "";
  const workerEnv = process.env.BENCH_WORKER_ENV ? ` worker with ${process.env.BENCH_WORKER_ENV};` : "";
  writeSection(
    BENCHES.memory,
    [
      provenance(commandLine("bench:memory"), r.loadAtStart),
      `Build ${r.commit}: \`npm run serve\` and \`npm run worker\` from dist/ (NODE_ENV=production, LOG_LEVEL=${GATEWAY_LOG_LEVEL}, defaults otherwise;${serveEnv}${workerEnv} the worker with WORKER_METRICS_PORT for its heap figures), each its own process,`,
      "PostgreSQL (fsync on) and the Temporal dev server and the zero-think-time mock upstream on the same machine; `npm start` on the same PostgreSQL server (its own database) and Temporal.",
      "RSS and its anonymous / file-backed parts and the peak from /proc/<pid>/status; the V8 heap is the main thread's (prom-client's default metrics): sandbox threads and the workflow thread are in RSS only. MB = 2^20 bytes.",
      "",
      ...r.rows.flatMap((rows) => [table(rows), ""]),
      ...r.devRows.flatMap((rows) => [table(rows), ""]),
      "V8 heap spaces:",
      ...r.rows.map(spaces),
      ...r.devRows.map(spaces),
      "",
      "What loading the code costs (a fresh `node`, each import on top of the previous ones, after a full GC):",
      `- serve: ${chain(r.serveChain)}`,
      `- worker: ${chain(r.workerChain)}`,
    ].join("\n"),
  );
}

