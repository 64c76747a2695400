import "reflect-metadata";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadAutocannon } from "./lib/node-peers.js";
import { BENCHES, commandLine, firstLine, loadNow, main, provenance, say, startProcess, writeSection } from "./lib/harness.js";
import { startDurablePostgres } from "./lib/postgres.js";
import { buildServer, commitOf, createTenant, GATEWAY_LOG_LEVEL, graphql, migrateWithDist, startDevLauncher, startServe } from "./lib/gateway.js";
import { ensureLiteLlm, startLiteLlm, startPortkey } from "./lib/peers.js";
import { targetsTables, type Cell } from "./lib/chat-targets.js";
import { conversation, converseOnce, expectedRoles, type Conversation, type ConversationSpec } from "./lib/conversations.js";
import { runSlowStreams } from "./lib/slow-streams.js";

const autocannon = await loadAutocannon();

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
 *   `SendStreamingMessage` for the stream rows; target gw-a2a; gw-a2a-rest the same over HTTP+JSON); and `npm start` (dev launcher) on
 *   the provider_b path;
 * - Portkey and LiteLLM, each on its Anthropic provider (the same translation) and its OpenAI
 *   provider;
 * - multi-turn rows (bench/lib/conversations.ts), each beside its Portkey/LiteLLM equivalent (their
 *   client resends the whole history every turn): continuation (gw-b-cont, and gw-b<N>-cont spread
 *   over BENCH_TENANTS accounts; portkey-b-cont, litellm-b-cont): each connection continues its own
 *   thread for BENCH_TURNS turns, then starts a new one; a tools round trip on a thread
 *   (gw-b-toolrt, portkey-b-toolrt, litellm-b-toolrt; at 1 and 10 connections only): a question
 *   answered with a tool call, then the tool result answered with text. Every answer of these rows
 *   is checked (status, text, thread, tool call) and a sample of finished threads is read back
 *   through GraphQL (all their messages stored).
 * Then the memory run: 1,000 concurrent slow streams through one API process (bench/lib/slow-streams.ts).
 *
 * Env: BENCH_CONNECTIONS (1,10,50), BENCH_DURATION s per cell (10), BENCH_WARMUP s (2),
 * BENCH_TARGETS (comma list of target ids, default all), BENCH_PHASES (latency,streams),
 * BENCH_STREAMS (1000), BENCH_TENANTS (accounts of the spread rows, 50), BENCH_TURNS (turns per continued
 * thread, 10), BENCH_GATEWAYS ("label=path,…": gateways built from other checkouts, for
 * bench/compare.sh; default this checkout), BENCH_SECTION (a label: the run's own section "## Chat (<label>)"),
 * BENCH_SLICES (1: each latency cell measured in that many slices of BENCH_DURATION / BENCH_SLICES,
 * the targets taking turns, so a drift of the machine's speed weighs on every row alike),
 * BENCH_MODES (non-stream,stream: the latency cells' modes), BENCH_WRITE=0 (print only), BENCH_SKIP_BUILD=1, BENCH_VERBOSE=1. Any error answer fails the run (exit 1)
 * after the section is written; it is never counted as throughput.
 *
 * BENCH_TARGETS=issue21 (a named set: gw-b, gw-b<N>, gw-b-cont, gw-b<N>-cont, gw-b-toolrt and the Portkey and
 * LiteLLM rows beside them) with BENCH_PHASES=latency measures issue 21's rows and targets alone, about 16
 * minutes on 2 cores; every target with both phases takes about 30.
 */
const LEVELS = String(process.env.BENCH_CONNECTIONS ?? "1,10,50")
  .split(",")
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const PHASES = new Set(String(process.env.BENCH_PHASES ?? "latency,streams").split(","));
const TENANTS = Number(process.env.BENCH_TENANTS ?? 50);
/** Named sets of targets for BENCH_TARGETS. */
const PRESETS: Record<string, string[]> = {
  // Issue 21's rows and targets: about 16 minutes on 2 cores with the default duration and levels.
  issue21: ["gw-b", `gw-b${TENANTS}`, "gw-b-cont", `gw-b${TENANTS}-cont`, "gw-b-toolrt", "portkey-b", "portkey-b-cont", "portkey-b-toolrt", "litellm-b", "litellm-b-cont", "litellm-b-toolrt"],
};
const ONLY = process.env.BENCH_TARGETS ? new Set(process.env.BENCH_TARGETS.split(",").flatMap((x) => PRESETS[x] ?? [x])) : undefined;
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const TURNS = Number(process.env.BENCH_TURNS ?? 10);
/** Each latency cell is measured in this many slices, the targets taking turns (BENCH_DURATION in all). */
const SLICES = Number(process.env.BENCH_SLICES ?? 1);
/** The latency cells' modes (BENCH_MODES: non-stream,stream): one alone, to profile it. */
const MODES = String(process.env.BENCH_MODES ?? "non-stream,stream")
  .split(",")
  .flatMap((m) => (m === "non-stream" ? [false] : m === "stream" ? [true] : []));
if (MODES.length === 0) throw new Error("BENCH_MODES must name non-stream, stream or both");
if (!Number.isInteger(SLICES) || SLICES < 1 || DURATION / SLICES < 1) throw new Error("BENCH_SLICES must be an integer ≥ 1, with BENCH_DURATION / BENCH_SLICES ≥ 1 s");
if (!Number.isInteger(TURNS) || TURNS < 2) throw new Error("BENCH_TURNS must be an integer ≥ 2 (turn 1 opens the thread, the others continue it)");
/** The tools round trip is measured at these connection counts only (of BENCH_CONNECTIONS). */
const ROUND_TRIP_LEVELS = [1, 10];
const MODEL_B = "provider_b/model-sonnet-4-6";
const MODEL_OA = "provider_a/model-2.5-flash"; // routed to the mock as an OpenAI-compatible upstream
const MODEL_DOWN = "provider_a/model-2.0-flash"; // routed to a closed port: the gw-fallback row's failing model
const PROMPT = "Say hello in five words.";

type Wire = "openai" | "anthropic";
interface Target {
  id: string;
  name: string;
  /** Which direct call it is compared with: the upstream wire format it speaks to the mock. */
  wire: Wire;
  direct?: boolean;
  url: string;
  /** The stream rows' URL, where it is not `url` (A2A's HTTP+JSON binding: `message:stream`). */
  streamUrl?: string;
  headers: Record<string, string>;
  /** The process that serves it, when it is one Node process (its CPU time per request is reported). */
  pid?: number;
  /** Authorization values used in turn, one per request (requests spread over many accounts). */
  rotateAuth?: string[];
  /** One request, the same every time; or, for the multi-turn rows, a conversation per connection. */
  body?: (stream: boolean) => string;
  conversation?: ConversationSpec;
  /** The roles stored in a thread (GraphQL, as the account's admin), for checking a conversation's threads. */
  threadRoles?: (threadId: string, auth: string | undefined) => Promise<string[]>;
  /** Connection counts this row is measured at (default: all of BENCH_CONNECTIONS). */
  levels?: number[];
  /** Rows of a group are listed together, after the single-request rows. */
  group?: "continuation" | "tools";
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
/** The same turn through A2A's HTTP+JSON binding (the method is in the URL). */
const a2aRestBody = () => JSON.stringify({ message: { messageId: "bench", role: "ROLE_USER", parts: [{ text: PROMPT }] } });
const mcpChatBody = () => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "chat", arguments: { message: PROMPT } } });
/** The same call in MCP 2026-07-28: the per-request `_meta` envelope (no discover needed, as a client with a cached one). */
const MCP_ENVELOPE = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} };
const mcp2026ChatBody = () => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "chat", arguments: { message: PROMPT }, _meta: MCP_ENVELOPE } });
const anthropicBody = (stream: boolean) =>
  JSON.stringify({ model: "mock-claude", max_tokens: 64, messages: [{ role: "user", content: PROMPT }], ...(stream ? { stream: true } : {}) });

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

/** The non-2xx statuses of a cell, as " (429×2, 503×1)", so an error line says what the errors were. */
const statusesOf = (r: { statusCodeStats?: Record<string, { count: number }> }) => {
  const codes = Object.entries(r.statusCodeStats ?? {}).filter(([code]) => !code.startsWith("2"));
  return codes.length ? ` (${codes.map(([code, s]) => `${code}×${s.count}`).join(", ")})` : "";
};

/** Error answers of the measured cells, reported together at the end (and the run fails). */
const failures: string[] = [];

async function load(t: Target, stream: boolean, duration: number, connections: number, measured = true): Promise<Cell> {
  let i = 0;
  const rotate = t.rotateAuth;
  const conv = t.conversation && conversation(t.conversation, stream);
  const cpuBefore = t.pid === undefined ? undefined : cpuMsOf(t.pid);
  const r = await autocannon({
    url: (stream && t.streamUrl) || t.url,
    method: "POST",
    headers: { "content-type": "application/json", ...t.headers },
    ...(t.body ? { body: t.body(stream) } : {}),
    connections,
    duration,
    ...(conv
      ? { requests: conv.steps }
      : rotate
        ? { requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: rotate[i++ % rotate.length]! } }) }] }
        : {}),
  });
  const cpuAfter = t.pid === undefined ? undefined : cpuMsOf(t.pid);
  const cpuMs = cpuBefore !== undefined && cpuAfter !== undefined && r.requests.total > 0 ? (cpuAfter - cpuBefore) / r.requests.total : undefined;
  // A 2xx that a conversation found wrong (no text, another thread, no tool call) is an error too.
  const wrong = conv?.bad.ok2xx ?? 0;
  const errors = r.non2xx + wrong + r.errors + r.timeouts;
  const cell = { rps: (r["2xx"] - wrong) / r.duration, p50: r.latency.p50, p99: r.latency.p99, errors, total: r.requests.total, cpuMs };
  if (errors > 0) {
    const what = `c=${connections} ${stream ? "stream" : "non-stream"} ${t.name}: ${errors} error answers of ${r.requests.total} (non-2xx ${r.non2xx}${statusesOf(r)}, wrong 2xx ${wrong}, connection errors ${r.errors}, timeouts ${r.timeouts})${conv?.bad.first ? `; first: ${conv.bad.first}` : ""}`;
    say(`ERROR ${what}`);
    if (measured) failures.push(what);
  }
  if (measured && conv && t.threadRoles) {
    const problem = await checkThreads(t, conv, stream);
    if (problem) {
      say(`ERROR c=${connections} ${problem}`);
      failures.push(`c=${connections} ${problem}`);
    }
  }
  return cell;
}

/**
 * Reads back the first few threads whose conversation finished: each must hold every message of
 * it (so each turn continued its own thread). Returns what is wrong, if anything.
 */
async function checkThreads(t: Target, conv: Conversation, stream: boolean): Promise<string | undefined> {
  const what = `${stream ? "stream" : "non-stream"} ${t.name}`;
  const want = expectedRoles(t.conversation!).join(",");
  if (conv.finished.length === 0) return `${what}: no conversation reached its last turn (a longer BENCH_DURATION?)`;
  const sample = conv.finished.slice(0, 3);
  for (const f of sample) {
    const roles = (await t.threadRoles!(f.threadId!, f.auth)).join(",");
    if (roles !== want) return `${what}: thread ${f.threadId} holds [${roles}], not [${want}]`;
  }
  const shown = t.conversation!.kind === "tools" ? want.replaceAll(",", ", ") : `(user, assistant) × ${t.conversation!.turns}`;
  say(`  ${t.name}: ${sample.length} of ${conv.finished.length} finished threads read back, each holds its ${want.split(",").length} messages: ${shown}`);
  return undefined;
}

/** One request (or one whole conversation), checked (a target that does not really work is not measured). */
async function check(t: Target, stream: boolean): Promise<void> {
  const mode = stream ? "stream" : "non-stream";
  if (t.conversation) {
    const conv = await converseOnce(t.url, t.headers, t.conversation, stream);
    if (conv.bad.count > 0 || conv.finished.length !== 1) throw new Error(`${t.name} (${mode}): ${conv.bad.first ?? "the conversation did not finish"}`);
    const problem = t.threadRoles && (await checkThreads(t, conv, stream));
    if (problem) throw new Error(problem);
    return;
  }
  const r = await fetch((stream && t.streamUrl) || t.url, { method: "POST", headers: { "content-type": "application/json", ...t.headers }, body: t.body!(stream) });
  const text = await r.text();
  const ok = r.status === 200 && (stream ? text.includes("upstream") : text.includes("Hello from the mock upstream."));
  if (!ok) throw new Error(`${t.name} (${mode}) answered ${r.status}: ${text.slice(0, 300)}`);
}

/**
 * One cell from its slices: throughput and CPU over all of them (exact); p50 and p99 the median of
 * the slices' (autocannon reports percentiles, not its histogram).
 */
function mergeSlices(cells: Cell[], seconds: number): Cell {
  if (cells.length === 1) return cells[0]!;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const total = cells.reduce((n, c) => n + c.total, 0);
  const cpu = cells.every((c) => c.cpuMs !== undefined) ? cells.reduce((n, c) => n + c.cpuMs! * c.total, 0) / Math.max(total, 1) : undefined;
  return {
    rps: cells.reduce((n, c) => n + c.rps * seconds, 0) / (seconds * cells.length),
    p50: median(cells.map((c) => c.p50)),
    p99: median(cells.map((c) => c.p99)),
    errors: cells.reduce((n, c) => n + c.errors, 0),
    total,
    ...(cpu === undefined ? {} : { cpuMs: cpu }),
  };
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
      OPENAI_COMPATIBLE_ROUTES: JSON.stringify({ [MODEL_OA]: { baseUrl: `${mockOrigin}/v1`, model: "mock" }, [MODEL_DOWN]: { baseUrl: "http://127.0.0.1:9/v1", model: "down" } }),
      ...(process.env.BENCH_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE } : {}),
    };

    const targets: Target[] = [
      { id: "mock-openai", name: "mock upstream, OpenAI format (direct)", wire: "openai", direct: true, url: `${mockOrigin}/v1/chat/completions`, headers: {}, body: openAiBody("mock") },
      { id: "mock-anthropic", name: "mock upstream, Anthropic format (direct)", wire: "anthropic", direct: true, url: `${mockOrigin}/v1/messages`, headers: { "x-api-key": "sk-mock", "anthropic-version": "2023-06-01" }, body: anthropicBody },
    ];
    const gatewayRows: { label: string; commit: string; pid: number }[] = [];
    for (const g of gatewaySpecs) {
      const spreadIds = [`gw-b${TENANTS}:${g.label}`, `gw-b${TENANTS}-cont:${g.label}`];
      const threadIds = [`gw-b-cont:${g.label}`, `gw-b-toolrt:${g.label}`];
      if (![`gw-b:${g.label}`, ...spreadIds, ...threadIds, `gw-b-limited:${g.label}`, `gw-fallback:${g.label}`, `gw-b-tools:${g.label}`, `gw-oa:${g.label}`, `gw-a2a:${g.label}`, `gw-a2a-rest:${g.label}`, `gw-mcp:${g.label}`, `gw-mcp26:${g.label}`].some(want)) continue;
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
      // The admin token of the account behind each key, for reading a conversation's thread back.
      const admins = new Map([[auth.authorization, tenant.adminToken]]);
      const threadRoles = async (threadId: string, authorization = auth.authorization) => {
        const d = await graphql(gw.url, admins.get(authorization)!, `query($id: ID!) { thread(id: $id) { messages(first: 200) { edges { node { role } } } } }`, { id: threadId });
        return (d.thread?.messages.edges ?? []).map((e: { node: { role: string } }) => e.node.role) as string[];
      };
      const many = [tenant];
      if (spreadIds.some(want)) while (many.length < TENANTS) many.push(await createTenant(gw.url, { model: MODEL_B }));
      for (const t of many) admins.set(`Bearer ${t.apiKey}`, t.adminToken);
      if (want(`gw-b${TENANTS}:${g.label}`)) {
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
      if (want(`gw-b-limited:${g.label}`)) {
        // The same path with a key that expires (in a year) and has a spend limit it never reaches:
        // what expiry checks and the per-key spend row in the hold statement cost (issue 20).
        const limited = await graphql(gw.url, tenant.adminToken, `mutation($a: ID!, $e: DateTimeISO) { createApiKey(agentId: $a, name: "limited", rateLimitPerMinute: 1000000, expiresAt: $e, spendLimit: "100000", spendLimitPeriod: MONTH) { key } }`, {
          a: tenant.agentId,
          e: new Date(Date.now() + 365 * 86_400_000).toISOString(),
        });
        targets.push({
          id: `gw-b-limited:${g.label}`,
          name: `agent-gateway serve, provider_b path, key with expiry + spend limit${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/v1/chat/completions`,
          pid: gw.pid,
          headers: { authorization: `Bearer ${limited.createApiKey.key}` },
          body: openAiBody(MODEL_B),
        });
      }
      if (want(`gw-fallback:${g.label}`)) {
        // An agent whose model's upstream is down (connection refused), with the provider_b model
        // as its fallback: once the model's circuit breaker is open, what a fallback costs over gw-b.
        const down = await createTenant(gw.url, { model: MODEL_DOWN });
        await graphql(gw.url, down.adminToken, `mutation($id: ID!, $f: [String!]) { updateAgent(id: $id, input: { fallbackModels: $f }) { id } }`, { id: down.agentId, f: [MODEL_B] });
        targets.push({
          id: `gw-fallback:${g.label}`,
          name: `agent-gateway serve, model down → provider_b fallback (breaker open)${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/v1/chat/completions`,
          pid: gw.pid,
          headers: { authorization: `Bearer ${down.apiKey}` },
          body: openAiBody(MODEL_DOWN),
        });
      }
      if (want(`gw-b-cont:${g.label}`))
        targets.push({
          id: `gw-b-cont:${g.label}`,
          name: `agent-gateway serve, provider_b path, continuation (${TURNS}-turn threads)${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/v1/chat/completions`,
          pid: gw.pid,
          headers: auth,
          conversation: { kind: "continuation", history: "thread", model: MODEL_B, turns: TURNS },
          threadRoles,
          group: "continuation",
        });
      if (want(`gw-b${TENANTS}-cont:${g.label}`))
        targets.push({
          id: `gw-b${TENANTS}-cont:${g.label}`,
          name: `agent-gateway serve, provider_b path, continuation (${TURNS}-turn threads) spread over ${TENANTS} accounts${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/v1/chat/completions`,
          pid: gw.pid,
          headers: auth,
          conversation: { kind: "continuation", history: "thread", model: MODEL_B, turns: TURNS, auths: many.map((t) => `Bearer ${t.apiKey}`) },
          threadRoles,
          group: "continuation",
        });
      if (want(`gw-b-toolrt:${g.label}`))
        targets.push({
          id: `gw-b-toolrt:${g.label}`,
          name: `agent-gateway serve, provider_b path, tools round trip on a thread${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/v1/chat/completions`,
          pid: gw.pid,
          headers: auth,
          conversation: { kind: "tools", history: "thread", model: MODEL_B, turns: 2 },
          threadRoles,
          levels: ROUND_TRIP_LEVELS,
          group: "tools",
        });
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
      if (want(`gw-a2a-rest:${g.label}`))
        targets.push({
          id: `gw-a2a-rest:${g.label}`,
          name: `agent-gateway serve, provider_b path through A2A (HTTP+JSON v1.0)${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/a2a/${tenant.agentId}/v1/message:send`,
          streamUrl: `${gw.url}/api/a2a/${tenant.agentId}/v1/message:stream`,
          pid: gw.pid,
          headers: { ...auth, "a2a-version": "1.0" },
          body: a2aRestBody,
        });
      if (want(`gw-oa:${g.label}`))
        targets.push({ id: `gw-oa:${g.label}`, name: `agent-gateway serve, OpenAI-compatible route${suffix}`, wire: "openai", url: `${gw.url}/api/v1/chat/completions`, pid: gw.pid, headers: auth, body: openAiBody(MODEL_OA) });
      // A chat turn through the agent's MCP server: one stateless `tools/call` of `chat` per request
      // (no handshake needed), answered on an SSE stream either way, so both modes send the same.
      if (want(`gw-mcp:${g.label}`))
        targets.push({
          id: `gw-mcp:${g.label}`,
          name: `agent-gateway serve, MCP chat tool, provider_b path${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/mcp/${tenant.agentId}`,
          pid: gw.pid,
          headers: { ...auth, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
          body: mcpChatBody,
        });
      if (want(`gw-mcp26:${g.label}`))
        targets.push({
          id: `gw-mcp26:${g.label}`,
          name: `agent-gateway serve, MCP 2026-07-28 chat tool, provider_b path${suffix}`,
          wire: "anthropic",
          url: `${gw.url}/api/mcp/${tenant.agentId}`,
          pid: gw.pid,
          headers: { ...auth, accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "chat" },
          body: mcp2026ChatBody,
        });
    }
    if (want("gw-start-b")) {
      say("starting npm start (dev launcher)");
      const root = gatewaySpecs[0]!.root;
      const dev = await startDevLauncher("npm start", root, join(dir, "dev-data"), upstreamEnv);
      const tenant = await createTenant(dev.url, { model: MODEL_B });
      targets.push({ id: "gw-start-b", name: "agent-gateway npm start, provider_b path", wire: "anthropic", url: `${dev.url}/api/v1/chat/completions`, headers: { authorization: `Bearer ${tenant.apiKey}` }, body: openAiBody(MODEL_B) });
    }
    // The peers' multi-turn rows: the same conversations, the client resending the whole history.
    const peerConversations = (id: string, name: string, model: string, url: string, headers: Record<string, string>, pid?: number): Target[] =>
      [
        want(`${id}-cont`) && { id: `${id}-cont`, name: `${name}, continuation (${TURNS}-turn conversations, history resent)`, conversation: { kind: "continuation", history: "client", model, turns: TURNS }, group: "continuation" },
        want(`${id}-toolrt`) && { id: `${id}-toolrt`, name: `${name}, tools round trip (history resent)`, conversation: { kind: "tools", history: "client", model, turns: 2 }, levels: ROUND_TRIP_LEVELS, group: "tools" },
      ]
        .filter((x) => x !== false)
        .map((x) => ({ ...x, wire: "anthropic", url, headers, pid }) as Target);
    if (["portkey-b", "portkey-oa", "portkey-b-cont", "portkey-b-toolrt"].some(want)) {
      const pk = await startPortkey();
      const h = (provider: string, host: string) => ({ authorization: "Bearer sk-mock", "x-portkey-provider": provider, "x-portkey-custom-host": host });
      if (want("portkey-b")) targets.push({ id: "portkey-b", name: `${pk.name}, Anthropic provider`, wire: "anthropic", url: `${pk.url}/v1/chat/completions`, pid: pk.proc.child.pid, headers: h("anthropic", `${mockOrigin}/v1`), body: openAiBody("mock-claude") });
      if (want("portkey-oa")) targets.push({ id: "portkey-oa", name: `${pk.name}, OpenAI provider`, wire: "openai", url: `${pk.url}/v1/chat/completions`, pid: pk.proc.child.pid, headers: h("openai", `${mockOrigin}/v1`), body: openAiBody("mock") });
      targets.push(...peerConversations("portkey-b", `${pk.name}, Anthropic provider`, "mock-claude", `${pk.url}/v1/chat/completions`, h("anthropic", `${mockOrigin}/v1`), pk.proc.child.pid));
    }
    if (["litellm-b", "litellm-oa", "litellm-b-cont", "litellm-b-toolrt"].some(want)) {
      const version = ensureLiteLlm();
      const ll = await startLiteLlm(dir, mockOrigin, version);
      if (want("litellm-b")) targets.push({ id: "litellm-b", name: `${ll.name}, Anthropic provider`, wire: "anthropic", url: `${ll.url}/v1/chat/completions`, headers: {}, body: openAiBody("bench-anthropic") });
      if (want("litellm-oa")) targets.push({ id: "litellm-oa", name: `${ll.name}, OpenAI provider`, wire: "openai", url: `${ll.url}/v1/chat/completions`, headers: {}, body: openAiBody("bench-openai") });
      targets.push(...peerConversations("litellm-b", `${ll.name}, Anthropic provider`, "bench-anthropic", `${ll.url}/v1/chat/completions`, {}));
    }
    // Each multi-turn group after the single-request rows, so each row sits beside its peers' equivalents.
    const order = (t: Target) => (t.group === "continuation" ? 1 : t.group === "tools" ? 2 : 0);
    targets.sort((a, b) => order(a) - order(b));
    for (const t of targets) for (const s of [false, true]) await check(t, s);

    const sections: string[] = [];
    await pg.resetStatements();
    if (PHASES.has("latency")) {
      const results = new Map<string, Cell>(); // `${id}|${connections}|${stream}`
      const sliced = new Map<string, Cell[]>(); // the same keys: each slice's own cell, in the order measured
      const rows: string[] = [];
      for (const connections of LEVELS) {
        for (const stream of MODES) {
          const cell = new Map<string, Cell>();
          const here = targets.filter((t) => !t.levels || t.levels.includes(connections));
          if (WARMUP > 0) for (const t of here) await load(t, stream, WARMUP, connections, false);
          // In slices, every target in turn, so a drift of the machine's speed during the cell
          // weighs on all of them alike (the ratios between rows are what the targets compare).
          const slices = new Map<string, Cell[]>();
          for (let i = 0; i < SLICES; i++) for (const t of here) slices.set(t.id, [...(slices.get(t.id) ?? []), await load(t, stream, DURATION / SLICES, connections)]);
          for (const t of here) {
            const r = mergeSlices(slices.get(t.id)!, DURATION / SLICES);
            cell.set(t.id, r);
            results.set(`${t.id}|${connections}|${stream}`, r);
            sliced.set(`${t.id}|${connections}|${stream}`, slices.get(t.id)!);
            say(`c=${connections} ${stream ? "stream    " : "non-stream"} ${t.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, errors ${r.errors}`);
          }
          for (const t of targets) {
            const r = cell.get(t.id);
            if (!r) continue;
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
      sections.push(latencySection(targets, results, sliced, rows, pgSettings, gatewayRows));
      if (gatewayRows.length > 0) sections.push(await floorSection(pg, `gw_${gatewayRows[gatewayRows.length - 1]!.label.replace(/\W/g, "_")}`));
    }
    if (PHASES.has("streams")) {
      // Compare runs measure every build, one after the other (each alone on the machine's cores).
      for (const g of gatewaySpecs)
        sections.push(await runSlowStreams({ dir, root: g.root, pg, count: STREAMS, model: MODEL_B, ...(gatewaySpecs.length > 1 ? { label: g.label } : {}) }));
    }
    writeSection(BENCHES.chat, `${provenance(commandLine("bench:chat"), loadAtStart)}\n\n${sections.join("\n\n")}`);
    if (failures.length > 0) throw new Error(`${failures.length} cell(s) had error answers (not counted as throughput):\n- ${failures.join("\n- ")}`);
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
    "hold commits asynchronously and the finish's durable commit flushes it too (docs/design/billing-reservations.md).",
  ].join("\n");
}

function latencySection(
  targets: Target[],
  results: Map<string, Cell>,
  sliced: Map<string, Cell[]>,
  rows: string[],
  pgSettings: string,
  gateways: { label: string; commit: string }[],
): string {
  const get = (id: string, c: number, s: boolean) => results.get(`${id}|${c}|${s}`);
  const baseOf = (id: string) => {
    const t = targets.find((x) => x.id === id);
    return t && (t.wire === "openai" ? "mock-openai" : "mock-anthropic");
  };
  const added = (id: string, c: number, s: boolean) => {
    const r = get(id, c, s);
    const base = baseOf(id) && get(baseOf(id)!, c, s);
    return r && base && r.errors <= r.total / 2 ? mean(c, r) - mean(c, base) : undefined;
  };
  // Slice i of every target was measured in the same round of turns, so slice i's are comparable.
  const addedBySlice = (id: string, c: number, s: boolean) => {
    const r = sliced.get(`${id}|${c}|${s}`);
    const base = baseOf(id) && sliced.get(`${baseOf(id)}|${c}|${s}`);
    return r && base && r.length === base.length && r.every((x) => x.rps > 0) ? r.map((x, i) => mean(c, x) - mean(c, base[i]!)) : undefined;
  };
  const multiTurn = targets.some((t) => t.conversation);
  const head = gateways[gateways.length - 1]?.label ?? "this"; // compare runs: the head build
  return [
    "### Added latency and throughput, side by side",
    "",
    `autocannon, ${LEVELS.join(" / ")} connections, ${DURATION} s per cell after a ${WARMUP} s warm-up${SLICES > 1 ? ` (in ${SLICES} slices of ${f2(DURATION / SLICES)} s, the targets taking turns; p50/p99 the median of the slices')` : ""}, one request body (one user message, max_tokens 64),`,
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
    "  the hold's commit is asynchronous, made durable by the finish's: docs/design/billing-reservations.md). All requests of a row",
    `  use one key of one account (one balance row that every hold and settle updates), except the row spread over ${TENANTS} accounts. provider_b path: the`,
    "  gateway translates the OpenAI request into an Anthropic Messages call and the answer (and SSE events) back. `npm start`: the dev launcher",
    "  (embedded PostgreSQL with fsync off, Temporal dev server and worker in the same process tree).",
    "- Portkey: `build/start-server.js --headless`, per-request routing headers, stores nothing; its `@hono/node-server` pinned to 1.13.8 (bench/install-node-peers.sh",
    "  `overrides`), without which every streamed response is an HTTP 500 (`TypeError: immutable`, Portkey-AI/gateway#1389). Its stream reader waits",
    "  25 ms before forwarding the first upstream chunk of every stream (`readStream` in its stream handler), which shows in its stream rows.",
    "- LiteLLM: `litellm --config config.yaml --num_workers 1` (`bench/lib/peers.ts` writes the config), no master key, no database.",
    ...(multiTurn
      ? [
          `- Multi-turn rows (\`bench/lib/conversations.ts\`), one row per request like the others: \"continuation\": each connection continues its own`,
          `  conversation for ${TURNS} turns (one new user message each), then starts a new one (so ${TURNS - 1} of ${TURNS} requests are continuations). On this gateway`,
          "  turn 1 opens a thread and each later turn sends only its new message and the `thread_id` (the gateway sends the stored history upstream);",
          "  Portkey and LiteLLM store nothing, so their client resends the whole history (the answers included) every turn, as their users do: the",
          "  same conversation, the same messages upstream. \"tools round trip\": a question with one function tool offered, answered with a tool call",
          "  (the mock's `tool_use`), then the tool's result (on this gateway: only the `tool` message and the `thread_id`; the peers: the three messages),",
          `  answered with text: two requests per round trip, at ${ROUND_TRIP_LEVELS.join(" and ")} connection(s). Every answer is checked (status, text,`,
          "  the same thread, the tool call) and a few finished threads are read back through GraphQL (every message stored); a wrong answer is an error.",
          `  Continuation rows spread over ${TENANTS} accounts give each thread the next account's key in turn.`,
        ]
      : []),
    "",
    "req/s counts good answers only; \"errors\" are non-2xx answers, 2xx answers a multi-turn row found wrong, connection errors and timeouts.",
    "",
    "| connections | mode | target | req/s | mean ms | p50 ms | p99 ms | added mean / p50 / p99 ms | errors | CPU ms/req |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    targetsTables({ levels: LEVELS, head, tenants: TENANTS, get, added, addedBySlice }),
  ].join("\n");
}
