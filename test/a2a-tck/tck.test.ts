import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../helpers/fake-upstreams.js";
import { createAccount, gql } from "../helpers/graphql.js";
import { startAgentHost, type AgentHost } from "./agent-host.js";
import { copyKit, isFailure, kitDir, kitPython, knownBugFor, readReports, runKit, type KitResult, type KnownKitBugs } from "./kit.js";
import { writeConformanceTable } from "./conformance-table.js";

/**
 * The official A2A conformance kit (TCK), pinned, against a chat agent and an automation agent of
 * a running instance, over both bindings the card lists (JSON-RPC, HTTP+JSON): every category
 * `run_tck.py --category all` runs (mandatory, capabilities, quality, features, and
 * transport-equivalence across the two bindings). A failure fails this test unless it is in
 * known-kit-bugs.json, which says for each why the kit is wrong, with the spec's text.
 * A2A_TCK_WRITE_DOCS=1 writes the conformance table of docs/design/a2a.md from the run.
 */
const ci = process.env.CI === "true" || process.env.CI === "1";
const available = existsSync(kitPython()) && existsSync(join(kitDir(), "run_tck.py"));
const TRANSPORTS = (process.env.A2A_TCK_TRANSPORTS ?? "jsonrpc,rest").split(",");
// One agent's run: 170-270 s on 2 cores (the kit's own 5 s waits are much of it); bounded generously.
const KIT_TIMEOUT_MS = 12 * 60_000;

describe("the A2A conformance kit (a2a-tck)", () => {
  if (!available && ci) {
    it("has the kit and its venv", () => {
      throw new Error(`a2a-tck not runnable: ${kitPython()} or ${kitDir()}/run_tck.py missing (.ci/run installs the venv; A2A_TCK_DIR points at the kit)`);
    });
    return;
  }
  let app: TestApp;
  let fake: FakeUpstream;
  const agents: { name: string; url: string; key: string }[] = [];
  const hosts: AgentHost[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    if (!available) return;
    fake = await startFakeUpstream();
    // The kit's push receiver listens on loopback over http: allowed, as in development.
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0", EGRESS_ALLOW_PRIVATE: "true" } });
    const acc = await createAccount(app.url, app.operatorToken, "a2a-tck", "100");
    for (const [name, input] of [
      ["chat", { name: "tck-chat" }],
      ["automation", { name: "tck-automation", script: `export default async function run(input) { return { got: input }; }` }],
    ] as const) {
      const id = (await gql(app.url, acc.adminToken, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: input })).data!.createAgent.id as string;
      const key = (await gql(app.url, acc.adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "tck") { key } }`, { a: id })).data!.createApiKey.key as string;
      // Each agent at the root of a port of its own, where the kit looks for it (agent-host.ts).
      const host = await startAgentHost(`${app.url}/api/a2a/${id}`);
      hosts.push(host);
      agents.push({ name, url: host.url, key });
    }
  });
  afterAll(async () => {
    for (const h of hosts) await h.close();
    await app?.close();
    await fake?.close();
    if (!process.env.A2A_TCK_KEEP) for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.skipIf(!available)(
    "passes every check but the kit's own known bugs, for a chat and an automation agent, over JSON-RPC and HTTP+JSON",
    async () => {
      const started = Date.now();
      // One agent's run after the other: the kit's push receiver binds the fixed localhost:8888 for
      // its whole session, so a second run at once cannot start it (its push tests then error).
      const results: KitResult[] = [];
      for (const a of agents) {
        const dir = mkdtempSync(join(tmpdir(), `agw-tck-${a.name}-`));
        dirs.push(dir);
        copyKit(dir);
        const run = await runKit(dir, a.url, a.key, TRANSPORTS, KIT_TIMEOUT_MS);
        writeFileSync(join(dir, "run.log"), run.output);
        // Partial reports are no result: every category must have run.
        if (run.timedOut) throw new Error(`the kit's run for the ${a.name} agent did not finish in ${KIT_TIMEOUT_MS / 60_000} min`);
        const res = readReports(dir, a.name);
        if (res.length === 0) throw new Error(`the kit wrote no report for the ${a.name} agent (exit ${run.code}):\n${run.output.slice(-4000)}`);
        results.push(...res);
      }
      const seconds = Math.round((Date.now() - started) / 1000);
      const known = JSON.parse(readFileSync(resolve("test/a2a-tck/known-kit-bugs.json"), "utf8")) as KnownKitBugs;
      const bugs = known.failures;
      const unexpected = results.filter((r) => isFailure(r) && !knownBugFor(r, bugs));
      if (process.env.A2A_TCK_WRITE_DOCS === "1") writeConformanceTable({ results, known, seconds, commit: commitOf(), date: new Date() });
      process.stderr.write(`[a2a-tck] ${results.length} results in ${seconds} s: ${count(results, "passed")} passed, ${results.filter(isFailure).length} failed (${unexpected.length} not known kit bugs), ${count(results, "skipped")} skipped\n`);
      if (process.env.A2A_TCK_RESULTS) writeFileSync(process.env.A2A_TCK_RESULTS, JSON.stringify({ seconds, results }, null, 1));
      expect(unexpected.map((r) => `${r.agent} ${r.transport} ${r.category} ${r.test}: ${r.why ?? r.outcome}`)).toEqual([]);
      expect(count(results, "passed")).toBeGreaterThan(0);
    },
    2 * KIT_TIMEOUT_MS,
  );
});

const count = (rs: KitResult[], outcome: string) => rs.filter((r) => r.outcome === outcome).length;

function commitOf(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}
