import "reflect-metadata";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import autocannon from "autocannon";
import { commandLine, firstLine, loadNow, main, provenance, say, startProcess, writeSection } from "./lib/harness.js";
import { startDurablePostgres } from "./lib/postgres.js";
import { buildServer, commitOf, createTenant, GATEWAY_LOG_LEVEL, migrateWithDist, startDevLauncher, startServe } from "./lib/gateway.js";
import { ensureLiteLlm, startLiteLlm, startPortkey } from "./lib/peers.js";
import { runSlowStreams } from "./lib/slow-streams.js";

/**
 * `npm run bench:chat`: one zero-think-time mock upstream (bench/chat-mock.ts, OpenAI and
 * Anthropic wire formats), one load generator (autocannon), the same connections, duration and
 * request for every target:
 * - the mock directly (the baseline of each wire format);
 * - this gateway as deployed (`npm run serve` from dist/, NODE_ENV=production, PostgreSQL with
 *   fsync on), keys, billing (hold + settle), a new thread per request and rate limits on, on
 *   the provider_b translation path (OpenAI in, Anthropic Messages out; also with one function
 *   tool offered and a tool_use answer: the tool path, target gw-b-tools) and on an
 *   OpenAI-compatible route; a chat turn through A2A (JSON-RPC v1.0 `SendMessage`, and
 *   `SendStreamingMessage` for the stream rows; target gw-a2a); and `npm start` (dev launcher) on
 *   the provider_b path;
 * - Portkey and LiteLLM, each on its Anthropic provider (the same translation) and its OpenAI
 *   provider.
 * Then the memory run: 1,000 concurrent slow streams through one API process (bench/lib/slow-streams.ts).
 *
 * Env: BENCH_CONNECTIONS (1,10,50), BENCH_DURATION s per cell (10), BENCH_WARMUP s (2),
 * BENCH_TARGETS (comma list of target ids, default all), BENCH_PHASES (latency,streams),
 * BENCH_STREAMS (1000), BENCH_TENANTS (accounts of the spread row, 50), BENCH_GATEWAYS ("label=path,…": gateways built from other checkouts, for
 * bench/compare.sh; default this checkout), BENCH_SECTION (heading suffix, for compare runs),
 * BENCH_WRITE=0 (print only), BENCH_SKIP_BUILD=1, BENCH_VERBOSE=1.
 */
const LEVELS = String(process.env.BENCH_CONNECTIONS ?? "1,10,50")
  .split(",")
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const PHASES = new Set(String(process.env.BENCH_PHASES ?? "latency,streams").split(","));
const ONLY = process.env.BENCH_TARGETS ? new Set(process.env.BENCH_TARGETS.split(",")) : undefined;
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
// Every other gateway row sends all requests with one key of one account (one balance row that
// every hold and settle updates); this row spreads them over many accounts.
const TENANTS = Number(process.env.BENCH_TENANTS ?? 50);
const MODEL_B = "provider_b/model-sonnet-4-6";
const MODEL_OA = "provider_a/model-2.5-flash"; // routed to the mock as an OpenAI-compatible upstream
const PROMPT = "Say hello in five words.";

type Wire = "openai" | "anthropic";
interface Target {
  id: string;
  name: string;
  /** Which direct call it is compared with: the upstream wire format it speaks to the mock. */
  wire: Wire;
  direct?: boolean;
  url: string;
  headers: Record<string, string>;
  /** The process that serves it, when it is one Node process (its CPU time per request is reported). */
  pid?: number;
  /** Authorization values used in turn, one per request (requests spread over many accounts). */
  rotateAuth?: string[];
  body: (stream: boolean) => string;
}

const openAiBody = (model: string) => (stream: boolean) =>
  JSON.stringify({ model, messages: [{ role: "user", content: PROMPT }], max_tokens: 64, ...(stream ? { stream: true } : {}) });
/** The tool path: one function tool offered; the mock answers with a tool_use block, which the gateway maps to tool-call deltas and stores. */
const TOOLS = [{ type: "function", function: { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const openAiToolsBody = (model: string) => (stream: boolean) =>
  JSON.stringify({ model, messages: [{ role: "user", content: PROMPT }], max_tokens: 64, tools: TOOLS, ...(stream ? { stream: true } : {}) });
/** A chat turn through A2A v1.0: SendMessage (blocking), or SendStreamingMessage for the stream rows. */
const a2aBody = (stream: boolean) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: stream ? "SendStreamingMessage" : "SendMessage", params: { message: { messageId: "bench", role: "ROLE_USER", parts: [{ text: PROMPT }] } } });
const anthropicBody = (stream: boolean) =>
  JSON.stringify({ model: "mock-claude", max_tokens: 64, messages: [{ role: "user", content: PROMPT }], ...(stream ? { stream: true } : {}) });

interface Cell {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  total: number;
  /** CPU time (user + system) of the target's process per completed request, ms. */
  cpuMs?: number;
}

/** utime + stime of a process in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

async function load(t: Target, stream: boolean, duration: number, connections: number): Promise<Cell> {
  let i = 0;
  const rotate = t.rotateAuth;
  const cpuBefore = t.pid === undefined ? undefined : cpuMsOf(t.pid);
  const r = await autocannon({
    url: t.url,
    method: "POST",
    headers: { "content-type": "application/json", ...t.headers },
    body: t.body(stream),
    connections,
    duration,
    ...(rotate ? { requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: rotate[i++ % rotate.length]! } }) }] } : {}),
  });
  const cpuAfter = t.pid === undefined ? undefined : cpuMsOf(t.pid);
  const cpuMs = cpuBefore !== undefined && cpuAfter !== undefined && r.requests.total > 0 ? (cpuAfter - cpuBefore) / r.requests.total : undefined;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts, total: r.requests.total, cpuMs };
}

/** One request, checked for the mock's text (a target that does not really work is not measured). */
async function check(t: Target, stream: boolean): Promise<void> {
  const r = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body(stream) });
  const text = await r.text();
  const ok = r.status === 200 && (stream ? text.includes("upstream") : text.includes("Hello from the mock upstream."));
  if (!ok) throw new Error(`${t.name} (${stream ? "stream" : "non-stream"}) answered ${r.status}: ${text.slice(0, 300)}`);
}

const mean = (connections: number, c: Cell) => (connections / c.rps) * 1000; // Little's law, closed loop
const f2 = (x: number) => x.toFixed(2);

await main(async () => {
  const loadAtStart = loadNow();
  const dir = mkdtempSync(join(tmpdir(), "agw-bench-chat-"));
  try {
    const gatewaySpecs = (process.env.BENCH_GATEWAYS ?? `this=${process.cwd()}`).split(",").map((s) => {
      const [label, path] = s.split("=");
      return { label: label!, root: resolve(path!) };
    });
    const want = (id: string) => !ONLY || ONLY.has(id) || ONLY.has(id.split(":")[0]!);

    const { proc: mock, line } = await firstLine((onStdout) =>
      startProcess("mock", process.execPath, ["--import", "@swc-node/register/esm-register", "bench/chat-mock.ts"], { onStdout }),
    );
    void mock;
    const mockOrigin = `http://127.0.0.1:${line}`;

    say("starting PostgreSQL (durable settings)");
    const pg = await startDurablePostgres(join(dir, "pg"));
    const pgSettings = await pg.settings();
    const upstreamEnv = {
      PROVIDER_A_API_KEY: "sk-mock",
      PROVIDER_A_BASE_URL: mockOrigin,
      PROVIDER_B_API_KEY: "sk-mock",
      PROVIDER_B_BASE_URL: mockOrigin,
      OPENAI_COMPATIBLE_ROUTES: JSON.stringify({ [MODEL_OA]: { baseUrl: `${mockOrigin}/v1`, model: "mock" } }),
      ...(process.env.BENCH_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE } : {}),
    };

    const targets: Target[] = [
      { id: "mock-openai", name: "mock upstream, OpenAI format (direct)", wire: "openai", direct: true, url: `${mockOrigin}/v1/chat/completions`, headers: {}, body: openAiBody("mock") },
      { id: "mock-anthropic", name: "mock upstream, Anthropic format (direct)", wire: "anthropic", direct: true, url: `${mockOrigin}/v1/messages`, headers: { "x-api-key": "sk-mock", "anthropic-version": "2023-06-01" }, body: anthropicBody },
    ];
    const gatewayRows: { label: string; commit: string; pid: number }[] = [];
    for (const g of gatewaySpecs) {
      if (![`gw-b:${g.label}`, `gw-b${TENANTS}:${g.label}`, `gw-b-tools:${g.label}`, `gw-oa:${g.label}`, `gw-a2a:${g.label}`].some(want)) continue;
      buildServer(g.root);
      const db = `gw_${g.label.replace(/\W/g, "_")}`;
      await pg.createDatabase(db);
      migrateWithDist(g.root, pg.url(db));
      const gw = await startServe(`gateway ${g.label}`, g.root, { ...upstreamEnv, DATABASE_URL: pg.url(db), TEMPORAL_ADDRESS: "127.0.0.1:1" });
      const tenant = await createTenant(gw.url, { model: MODEL_B });
      const commit = commitOf(g.root);
      gatewayRows.push({ label: g.label, commit, pid: gw.pid });
      const auth = { authorization: `Bearer ${tenant.apiKey}` };
      const suffix = gatewaySpecs.length > 1 ? ` [${g.label} ${commit}]` : "";
      if (want(`gw-b:${g.label}`))
        targets.push({ id: `gw-b:${g.label}`, name: `agent-gateway serve, provider_b path${suffix}`, wire: "anthropic", url: `${gw.url}/api/v1/chat/completions`, pid: gw.pid, headers: auth, body: openAiBody(MODEL_B) });
      if (want(`gw-b${TENANTS}:${g.label}`)) {
        const many = [tenant];
        while (many.length < TENANTS) many.push(await createTenant(gw.url, { model: MODEL_B }));
        targets.push({
          id: `gw-b${TENANTS}:${g.label}`,
          name: `agent-gateway serve, provider_b path, requests spread over ${TENANTS} accounts${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/v1/chat/completions`,
          pid: gw.pid,
          headers: auth,
          rotateAuth: many.map((t) => `Bearer ${t.apiKey}`),
          body: openAiBody(MODEL_B),
        });
      }
      if (want(`gw-b-tools:${g.label}`))
        targets.push({ id: `gw-b-tools:${g.label}`, name: `agent-gateway serve, provider_b path + tools${suffix}`, wire: "anthropic", url: `${gw.url}/api/v1/chat/completions`, pid: gw.pid, headers: auth, body: openAiToolsBody(MODEL_B) });
      if (want(`gw-a2a:${g.label}`))
        targets.push({
          id: `gw-a2a:${g.label}`,
          name: `agent-gateway serve, provider_b path through A2A (JSON-RPC v1.0)${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/a2a/${tenant.agentId}`,
          pid: gw.pid,
          headers: { ...auth, "a2a-version": "1.0" },
          body: a2aBody,
        });
      if (want(`gw-oa:${g.label}`))
        targets.push({ id: `gw-oa:${g.label}`, name: `agent-gateway serve, OpenAI-compatible route${suffix}`, wire: "openai", url: `${gw.url}/api/v1/chat/completions`, pid: gw.pid, headers: auth, body: openAiBody(MODEL_OA) });
    }
    if (want("gw-start-b")) {
      say("starting npm start (dev launcher)");
      const root = gatewaySpecs[0]!.root;
      const dev = await startDevLauncher("npm start", root, join(dir, "dev-data"), upstreamEnv);
      const tenant = await createTenant(dev.url, { model: MODEL_B });
      targets.push({ id: "gw-start-b", name: "agent-gateway npm start, provider_b path", wire: "anthropic", url: `${dev.url}/api/v1/chat/completions`, headers: { authorization: `Bearer ${tenant.apiKey}` }, body: openAiBody(MODEL_B) });
    }
    if (want("portkey-b") || want("portkey-oa")) {
      const pk = await startPortkey();
      const h = (provider: string, host: string) => ({ authorization: "Bearer sk-mock", "x-portkey-provider": provider, "x-portkey-custom-host": host });
      if (want("portkey-b")) targets.push({ id: "portkey-b", name: `${pk.name}, Anthropic provider`, wire: "anthropic", url: `${pk.url}/v1/chat/completions`, pid: pk.proc.child.pid, headers: h("anthropic", `${mockOrigin}/v1`), body: openAiBody("mock-claude") });
      if (want("portkey-oa")) targets.push({ id: "portkey-oa", name: `${pk.name}, OpenAI provider`, wire: "openai", url: `${pk.url}/v1/chat/completions`, pid: pk.proc.child.pid, headers: h("openai", `${mockOrigin}/v1`), body: openAiBody("mock") });
    }
    if (want("litellm-b") || want("litellm-oa")) {
      const version = ensureLiteLlm();
      const ll = await startLiteLlm(dir, mockOrigin, version);
      if (want("litellm-b")) targets.push({ id: "litellm-b", name: `${ll.name}, Anthropic provider`, wire: "anthropic", url: `${ll.url}/v1/chat/completions`, headers: {}, body: openAiBody("bench-anthropic") });
      if (want("litellm-oa")) targets.push({ id: "litellm-oa", name: `${ll.name}, OpenAI provider`, wire: "openai", url: `${ll.url}/v1/chat/completions`, headers: {}, body: openAiBody("bench-openai") });
    }
    for (const t of targets) for (const s of [false, true]) await check(t, s);

    const sections: string[] = [];
    await pg.resetStatements();
    if (PHASES.has("latency")) {
      const results = new Map<string, Cell>(); // `${id}|${connections}|${stream}`
      const rows: string[] = [];
      for (const connections of LEVELS) {
        for (const stream of [false, true]) {
          const cell = new Map<string, Cell>();
          for (const t of targets) {
            if (WARMUP > 0) await load(t, stream, WARMUP, connections);
            const r = await load(t, stream, DURATION, connections);
            cell.set(t.id, r);
            results.set(`${t.id}|${connections}|${stream}`, r);
            say(`c=${connections} ${stream ? "stream    " : "non-stream"} ${t.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}`);
          }
          for (const t of targets) {
            const r = cell.get(t.id)!;
            const base = cell.get(t.wire === "openai" ? "mock-openai" : "mock-anthropic")!;
            const failed = r.errors > r.total / 2;
            const added = t.direct || failed ? "—" : `+${f2(mean(connections, r) - mean(connections, base))} / +${r.p50 - base.p50} / +${r.p99 - base.p99}`;
            rows.push(
              failed
                ? `| ${connections} | ${stream ? "stream" : "non-stream"} | ${t.name} | failed | — | — | — | — | ${r.errors} | — |`
                : `| ${connections} | ${stream ? "stream" : "non-stream"} | ${t.name} | ${r.rps.toFixed(0)} | ${f2(mean(connections, r))} | ${r.p50} | ${r.p99} | ${added} | ${r.errors} | ${r.cpuMs === undefined ? "—" : r.cpuMs.toFixed(3)} |`,
            );
          }
        }
      }
      sections.push(latencySection(targets, results, rows, pgSettings, gatewayRows));
      if (gatewayRows.length > 0) sections.push(await floorSection(pg, `gw_${gatewayRows[gatewayRows.length - 1]!.label.replace(/\W/g, "_")}`));
    }
    if (PHASES.has("streams")) {
      // Compare runs measure every build, one after the other (each alone on the machine's cores).
      for (const g of gatewaySpecs)
        sections.push(await runSlowStreams({ dir, root: g.root, pg, count: STREAMS, model: MODEL_B, ...(gatewaySpecs.length > 1 ? { label: g.label } : {}) }));
    }
    const suffix = process.env.BENCH_SECTION ? ` (${process.env.BENCH_SECTION})` : "";
    writeSection(`## Chat${suffix}`, `${provenance(commandLine("bench:chat"), loadAtStart)}\n\n${sections.join("\n\n")}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** pg_stat_statements for the gateway's database over the latency runs, and the commit floor of this PostgreSQL. */
async function floorSection(pg: Awaited<ReturnType<typeof startDurablePostgres>>, database: string): Promise<string> {
  const stmts = (await pg.statements(database, 12)).filter((s) => s.calls >= 100);
  const floor = await pg.floor(2000);
  const cut = (q: string) => (q.length > 110 ? `${q.slice(0, 110)}…` : q).replace(/\|/g, "\\|");
  return [
    "### Where a turn's time goes in PostgreSQL",
    "",
    "From `pg_stat_statements` over the runs above (the gateway's database; statements called at least 100 times). Execution time excludes the",
    "round trip and the commit's WAL flush; every statement here commits on its own (a `set_config('synchronous_commit', …)` in it: that commit does not wait for the flush).",
    "",
    "| calls | mean exec ms | statement |",
    "|---|---|---|",
    ...stmts.map((s) => `| ${s.calls} | ${s.meanMs.toFixed(3)} | \`${cut(s.query)}\` |`),
    "",
    `Same server, one connection, 2,000 sequential calls each: \`select 1\` round trip p50 ${floor.selectMs.toFixed(3)} ms; a one-row insert committed on its own`,
    `(round trip + WAL flush with fsync on) p50 ${floor.commitMs.toFixed(3)} ms; the same insert with \`synchronous_commit = off\` p50 ${floor.asyncCommitMs.toFixed(3)} ms.`,
    "Until 094c7e7 a chat turn committed twice durably before its answer (hold + thread before the upstream call, messages + settle after it):",
    `a database floor of about 2 × ${floor.commitMs.toFixed(2)} ms plus the two statements' execution, at one connection and before any HTTP work. Since dc68f77 the`,
    "hold commits asynchronously and the finish's durable commit flushes it too (docs/billing-reservations.md).",
  ].join("\n");
}

function latencySection(
  targets: Target[],
  results: Map<string, Cell>,
  rows: string[],
  pgSettings: string,
  gateways: { label: string; commit: string }[],
): string {
  const get = (id: string, c: number, s: boolean) => results.get(`${id}|${c}|${s}`);
  const added = (id: string, c: number, s: boolean) => {
    const t = targets.find((x) => x.id === id);
    const r = get(id, c, s);
    const base = t && get(t.wire === "openai" ? "mock-openai" : "mock-anthropic", c, s);
    return r && base && r.errors <= r.total / 2 ? mean(c, r) - mean(c, base) : undefined;
  };
  const ours = `gw-b:${gateways[gateways.length - 1]?.label ?? "this"}`; // compare runs: the head build
  const lines: string[] = [];
  const verdict = (label: string, ok: boolean | undefined, detail: string) => lines.push(`| ${label} | ${ok === undefined ? "not measured" : ok ? "**met**" : "**not met**"} | ${detail} |`);
  const lo = LEVELS[0]!;
  const hi = LEVELS[LEVELS.length - 1]!;
  for (const s of [false, true]) {
    const mode = s ? "stream" : "non-stream";
    const a = added(ours, lo, s);
    const p = added("portkey-b", lo, s);
    verdict(`added mean at ${lo} connection(s) ≤ Portkey's (${mode}, provider_b vs Portkey's Anthropic provider)`, a !== undefined && p !== undefined ? a <= p : undefined,
      a !== undefined && p !== undefined ? `ours +${f2(a)} ms, Portkey +${f2(p)} ms: ${f2(a / p)}× Portkey's` : "—");
    const ra = get(ours, hi, s);
    const rp = get("portkey-b", hi, s);
    verdict(`throughput at ${hi} connections ≥ Portkey's (${mode})`, ra && rp && rp.errors <= rp.total / 2 ? ra.rps >= rp.rps : undefined,
      ra && rp ? `ours ${ra.rps.toFixed(0)} req/s, Portkey ${rp.rps.toFixed(0)} req/s: ${f2(ra.rps / rp.rps)}× Portkey's` : "—");
    const l = added("litellm-b", lo, s);
    verdict(`LiteLLM's added mean at ${lo} connection(s) ≥ 5× ours (${mode})`, a !== undefined && l !== undefined ? l >= 5 * a : undefined,
      a !== undefined && l !== undefined ? `LiteLLM +${f2(l)} ms, ours +${f2(a)} ms: ${f2(l / a)}×` : "—");
  }
  return [
    "### Added latency and throughput, side by side",
    "",
    `autocannon, ${LEVELS.join(" / ")} connections, ${DURATION} s per cell after a ${WARMUP} s warm-up, one request body (one user message, max_tokens 64),`,
    "every target answering from the same zero-think-time mock (`bench/chat-mock.ts`). \"added\" is over the direct call to the mock in the wire format",
    "the target speaks upstream (Anthropic Messages for the provider_b path and the peers' Anthropic providers; OpenAI otherwise).",
    "\"mean\" is connections / req/s (Little's law for a closed loop; it resolves sub-millisecond differences); autocannon's p50/p99 are whole milliseconds.",
    "At 1 connection added latency is per-request work; at 50 every process shares the same 2 cores with the load generator, so it is mostly queueing.",
    "\"CPU ms/req\" is the serving process's user + system CPU time (`/proc/<pid>/stat`) over the cell divided by its completed requests: the",
    "process's own work, unaffected by waiting for other processes (PostgreSQL, the mock, the load generator) or for a core.",
    "",
    `- agent-gateway: \`npm run serve\` (node dist/src/entry/serve.js, NODE_ENV=production, LOG_LEVEL=${GATEWAY_LOG_LEVEL}) on PostgreSQL ${pgSettings}`,
    `  (build${gateways.length > 1 ? "s" : ""}: ${gateways.map((g) => `${g.label} = ${g.commit}`).join(", ") || "—"}). Every request: API-key auth, per-key rate limit, hold on the balance, a new`,
    "  thread, the upstream call, then the two stored messages + settle — two PostgreSQL round trips (until 094c7e7 each a durable commit; since dc68f77",
    "  the hold's commit is asynchronous, made durable by the finish's: docs/billing-reservations.md). All requests of a row",
    `  use one key of one account (one balance row that every hold and settle updates), except the row spread over ${TENANTS} accounts. provider_b path: the`,
    "  gateway translates the OpenAI request into an Anthropic Messages call and the answer (and SSE events) back. `npm start`: the dev launcher",
    "  (embedded PostgreSQL with fsync off, Temporal dev server and worker in the same process tree).",
    "- Portkey: `build/start-server.js --headless`, per-request routing headers, stores nothing; its `@hono/node-server` pinned to 1.13.8 (package.json",
    "  `overrides`), without which every streamed response is an HTTP 500 (`TypeError: immutable`, Portkey-AI/gateway#1389). Its stream reader waits",
    "  25 ms before forwarding the first upstream chunk of every stream (`readStream` in its stream handler), which shows in its stream rows.",
    "- LiteLLM: `litellm --config config.yaml --num_workers 1` (`bench/lib/peers.ts` writes the config), no master key, no database.",
    "",
    "| connections | mode | target | req/s | mean ms | p50 ms | p99 ms | added mean / p50 / p99 ms | non-2xx + errors | CPU ms/req |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    "### Targets (issue 13)",
    "",
    "| target | verdict | measured |",
    "|---|---|---|",
    ...lines,
  ].join("\n");
}
