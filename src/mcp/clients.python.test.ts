import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../test/helpers/app.js";
import { startFakeUpstream, type FakeUpstream } from "../../test/helpers/fake-upstreams.js";
import { TWO_QUESTIONS_SCRIPT } from "../../test/helpers/ask.js";
import { createAccount, gql } from "../../test/helpers/graphql.js";

/**
 * The official Python MCP SDK (`mcp`, test/clients/mcp_sdk.py), unmodified, against the MCP
 * servers of a chat agent and of an automation agent. The venv comes from `.ci/run` (pip install
 * … mcp); in CI a missing interpreter fails, locally the test is skipped.
 */
const python = process.env.OPENAI_PYTHON ?? resolve(".tools/py-venv/bin/python");
const available = existsSync(python);
const ci = process.env.CI === "true" || process.env.CI === "1";

const SCRIPT = `export default async function run(input, ctx) {
  ctx.log("counting to", input.n);
  let s = 0;
  for (let i = 1; i <= input.n; i++) s += i;
  return { sum: s };
}`;

describe("real Python client: the mcp SDK", () => {
  if (!available && ci) {
    it("has the Python interpreter with mcp installed", () => {
      throw new Error(`Python interpreter not found at ${python} (set OPENAI_PYTHON or let .ci/run create .tools/py-venv)`);
    });
    return;
  }
  let app: TestApp;
  let fake: FakeUpstream;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    if (!available) return;
    fake = await startFakeUpstream();
    app = await startTestApp({ worker: true, env: { PROVIDER_A_BASE_URL: fake.url, PROVIDER_A_API_KEY: "ka", PROVIDER_B_BASE_URL: fake.url, PROVIDER_B_API_KEY: "kb", UPSTREAM_MAX_RETRIES: "0" } });
    const { adminToken } = await createAccount(app.url, app.operatorToken, "py-mcp", "10");
    const agent = async (name: string, script?: string) =>
      (await gql(app.url, adminToken, `mutation($n: String!, $s: String) { createAgent(input: { name: $n, script: $s }) { id } }`, { n: name, s: script ?? null })).data!.createAgent.id as string;
    const key = async (agentId: string) => (await gql(app.url, adminToken, `mutation($a: ID!) { createApiKey(agentId: $a, name: "py") { key } }`, { a: agentId })).data!.createApiKey.key as string;
    const chatAgent = await agent("Py chat");
    const runAgent = await agent("Py runner", SCRIPT);
    const askAgent = await agent("Py asker", TWO_QUESTIONS_SCRIPT);
    const other = await agent("Someone else");
    Object.assign(env, {
      CHAT_URL: `${app.url}/api/mcp/${chatAgent}`,
      CHAT_KEY: await key(chatAgent),
      RUN_URL: `${app.url}/api/mcp/${runAgent}`,
      RUN_KEY: await key(runAgent),
      ASK_URL: `${app.url}/api/mcp/${askAgent}`,
      ASK_KEY: await key(askAgent),
      FOREIGN_KEY: await key(other),
      ADMIN_TOKEN: adminToken,
    });
  });
  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });
  const run = (mode?: "legacy") =>
    new Promise<any>((ok, fail) =>
      execFile(python, [resolve("test/clients/mcp_sdk.py")], { env: { ...process.env, ...env, ...(mode ? { MCP_MODE: mode } : {}) }, timeout: 120_000 }, (err, out, errOut) =>
        err ? fail(new Error(`${err.message}\n${errOut}`)) : ok(JSON.parse(out.trim().split("\n").at(-1)!)),
      ),
    );

  // Both eras through the same script: the default mode (it probes server/discover) gets
  // 2026-07-28, not a fallback; legacy mode the initialize handshake's newest revision.
  it.skipIf(!available).each([
    ["default mode", undefined, "2026-07-28"],
    ["legacy mode", "legacy", "2025-11-25"],
  ] as const)("%s: lists and calls chat, run (following progress) and get_job; 401 without a key, with another agent's, an admin token or an unknown key, each saying which", async (_, mode, protocol) => {
    const out = await run(mode);
    expect(out.protocol).toBe(protocol);
    expect(out.server).toBe("Py chat");
    expect(out.chat_tools).toEqual(["chat"]);
    expect(out.answer).toBe("Hello from A");
    expect(out.structured).toEqual({ answer: "Hello from A", thread_id: expect.stringMatching(/^thr_/) });
    expect(out.same_thread).toBe(true);
    expect(out.unknown_thread.is_error).toBe(true);
    expect(out.unknown_thread.text).toMatch(/^thread_not_found: /);

    expect(out.run_tools).toEqual(["get_job", "run"]);
    expect(out.run.is_error).toBeFalsy();
    expect(out.run.structured).toMatchObject({ status: "done", result: { sum: 6 }, job_id: expect.stringMatching(/^job_/) });
    const statuses = (out.progress as [number, number | null, string][]).map((p) => p[2]);
    expect(statuses.at(-1)).toBe("done");
    expect(statuses).toContain("running");
    const values = (out.progress as [number][]).map((p) => p[0]);
    expect(values).toEqual([...values].sort((a, b) => a - b)); // progress only increases
    expect(out.get_job).toMatchObject({ job_id: out.run.structured.job_id, status: "done", result: { sum: 6 } });
    expect(out.missing_job.is_error).toBe(true);
    expect(out.missing_job.text).toMatch(/^job_not_found: /);
    if (protocol === "2026-07-28") {
      // ctx.ask's questions reach the client's elicitation callback (2026-07-28 input requests), its answers resume the run.
      expect(out.ask.is_error, JSON.stringify(out.ask)).toBeFalsy();
      expect(out.ask.structured).toMatchObject({ status: "done", result: { ok: true, note: "from python", items: ["py"] } });
      expect(out.ask.asked.map((a: { message: string }) => a.message)).toEqual(["Approve order 5?", "Which items?"]);
    } else {
      // The initialize era has no input requests: run reports the question's status, answered elsewhere.
      expect(out.ask.structured).toMatchObject({ status: "input_required" });
    }

    for (const refused of [out.no_key, out.foreign_key, out.admin_token, out.unknown_key]) {
      expect(refused.error).not.toBeNull();
      expect(refused.statuses.map((s: [number]) => s[0])).toContain(401);
      expect(refused.statuses.find((s: [number, string]) => s[0] === 401)[1]).toMatch(/^Bearer realm="agent-gateway", resource_metadata="/);
    }
    // What the client raises says what is wrong with the key (the 401's JSON-RPC error body).
    expect(out.no_key.message).toMatch(/Missing API key/);
    expect(out.foreign_key.message).toMatch(/This API key belongs to another agent/);
    expect(out.admin_token.message).toMatch(/Admin tokens \(adm_\.\.\.\) are for \/graphql; this endpoint takes an agent key \(a2a_\.\.\.\)/);
    expect(out.unknown_key.message).toMatch(/Invalid API key: no agent key/);
    expect(out.foreign_key.statuses.find((s: [number, string]) => s[0] === 401)[1]).toMatch(/error_description="This API key belongs to another agent/);
  });

  it.skipIf(!available)("docs/guides/mcp.md's Python example works as written (with this agent's id and key)", async () => {
    const guide = readFileSync(resolve("docs/guides/mcp.md"), "utf8");
    const section = guide.slice(guide.indexOf("## An agent, a key, a tool call"));
    const example = /```python\n([\s\S]*?)```/.exec(section)![1]!;
    expect(example).toContain('call_tool("chat"');
    const dir = mkdtempSync(join(tmpdir(), "agw-mcp-readme-"));
    try {
      const file = join(dir, "example.py");
      writeFileSync(file, example.replace("http://localhost:3000", app.url));
      const agentEnv = { ...process.env, AGENT_ID: env.CHAT_URL!.split("/").at(-1)!, AGENT_KEY: env.CHAT_KEY! };
      const out = await new Promise<string>((ok, fail) => execFile(python, [file], { timeout: 60_000, env: agentEnv }, (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : ok(stdout))));
      expect(out).toMatch(/'answer': 'Hello from A', 'thread_id': 'thr_\w+'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
